"""The typed frames: every frame declared once as data (``frames``, ``schemas``), the display
strings parsed (``parse``), typed page decoders (``decode``) and Arrow IPC (``arrowframe``).
Imports only the ground modules: no HTTP, no loaders.
"""
