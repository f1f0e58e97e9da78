"""This folder is a measurement corpus for the Neuron migration scan, not a test suite."""
collect_ignore_glob = ["*"]
