"""Browser capture: the system Chromium driven by Playwright, deterministic settings, evidence with sha256."""
