"""Core tool handlers: one module per tool, named after it (bee_context_packet -> context_packet.py)."""
