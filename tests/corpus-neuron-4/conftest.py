# This folder is a scan corpus: its files are read by the linter, never run by pytest.
# The project's pytest testpaths include tests/, so keep every file below out of collection.
collect_ignore_glob = ["*"]
