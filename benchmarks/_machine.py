"""Machine facts recorded beside every benchmark result (see perfkit.measure.provenance)."""
from perfkit.measure.provenance import machine_info  # noqa: F401
