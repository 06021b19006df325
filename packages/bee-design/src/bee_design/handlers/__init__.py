"""Design tool handlers: one module per tool, named after it (bee_design_slice -> design_slice.py)."""
