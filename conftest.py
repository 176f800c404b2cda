"""Doctest collection of perfkit/: modules that need PyTorch are skipped where it is not installed."""
import importlib.util

collect_ignore = [] if importlib.util.find_spec("torch") else ["perfkit/torch_worker.py", "perfkit/torch_models.py",
                                                                 "perfkit/resattnet3d.py"]
