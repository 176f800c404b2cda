"""The hybrid form's term sets that a form search tries, simplest first (:func:`hybrid_variants`): the five
rates alone, then rates per level of the columns a reader would try first (:func:`default_modifiers`), a regime
at the smallest batch, and rates by the layer shape."""
from __future__ import annotations

__all__ = ["hybrid_variants", "default_modifiers", "SHAPE_COLUMNS", "SHAPE_WORDS"]


def default_modifiers(roles: dict) -> dict:
    """The modifiers a reader would try first, restricted to the columns the data has."""
    cat, ext = roles.get("categorical", []), roles.get("extrinsic", [])
    mods = {"compute": ["workers"], "step": ["workers"], "allreduce": ["workers"],
            "activations": ["activation"], "update": ["optimizer"]}
    have = set(cat) | set(ext)
    return {k: [c for c in v if c in have] for k, v in mods.items() if any(c in have for c in v)}


#: columns of the layer shape whose levels may get their own compute and step rates (:func:`hybrid_variants`): a
#: CPU's convolution kernels run at different speeds for different widths and paddings (Chapter 5: valid padding
#: with k = 4 is slower than with k = 5), which FLOPs alone do not say
SHAPE_COLUMNS = ("num_filters", "padding")
SHAPE_WORDS = {"num_filters": "width", "padding": "padding"}


def hybrid_variants(network: str, roles: dict, shape: bool = True) -> list[tuple[dict, str]]:
    """(settings, words) of the hybrid candidates :func:`perfkit.model.selection.search.search_forms` tries, simplest first.

    ``shape=False`` leaves out the rates by the layer shape (:data:`SHAPE_COLUMNS`): their rates exist only for
    the combinations of workers, regime and shape levels seen in fit, so they suit a search that checks them by
    cross-validation better than a form asked for by name.
    """
    mods = default_modifiers(roles)
    out = [(dict(modifiers={}), "rates of FLOPs, activations, parameters, all-reduce, step")]
    if mods:
        out.append((dict(modifiers=mods), "+ rates by " + "/".join(sorted({c for v in mods.values() for c in v}))))
        if "batch_size" in roles.get("extrinsic", []):
            reg = "batch_size=min"
            regime_mods = {k: v + ([reg] if k in ("compute", "step") else []) for k, v in mods.items()}
            regime_mods.setdefault("compute", [reg])
            out.append((dict(modifiers=regime_mods, regimes=[reg]), "+ a regime at the smallest batch"))
            # rates by the layer shape: by width alone, then by every shape column the data has
            named = {c for cols in roles.values() for c in cols}
            columns = [c for c in SHAPE_COLUMNS if c in named] if shape else []
            sets = [["num_filters"]] if "num_filters" in columns else []
            if columns and columns not in sets:
                sets.append(columns)
            for cols in sets:
                shaped = {k: v + (cols if k in ("compute", "step") else []) for k, v in regime_mods.items()}
                out.append((dict(modifiers=shaped, regimes=[reg]),
                            "+ compute and step rates by " + " and ".join(SHAPE_WORDS[c] for c in cols)))
    return out
