"""Machine facts recorded beside every benchmark result (see perfkit.provenance)."""
from perfkit.provenance import machine_info  # noqa: F401
