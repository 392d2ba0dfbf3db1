"""The simulation: everything the sandbox derives from the seed (see ``quantscope.sandbox``)."""
