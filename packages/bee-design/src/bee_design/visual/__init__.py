"""Visual specs and reports: reference images, pixel diffs with tolerances, and the untrusted assessment."""
