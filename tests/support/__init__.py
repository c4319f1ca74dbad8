"""Support code shared by the tests and the benchmark harnesses."""
