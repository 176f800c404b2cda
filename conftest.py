"""Doctest collection of perfkit/: modules that need PyTorch are skipped where it is not installed."""
import importlib.util

collect_ignore = [] if importlib.util.find_spec("torch") else ["perfkit/measure/adapters"]
