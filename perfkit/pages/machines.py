"""The generated parts of docs/machines.md and the README that say which of the thesis's claims hold on which
machine: functions of ``figures/ch3/claims_ch3_machines.csv`` (Chapter 3's machine ledger) and
``figures/ch4/ext_q_workers_by_machine.csv`` alone, so the pages cannot drift from the committed results."""
from __future__ import annotations

from pathlib import Path

__all__ = ["MACHINE_LEDGER", "Q_BY_MACHINE", "machines_table", "readme_machines"]

#: the ledger the pages read, relative to the repository
MACHINE_LEDGER = "figures/ch3/claims_ch3_machines.csv"
#: Chapter 4's q(workers) per machine, relative to the repository
Q_BY_MACHINE = "figures/ch4/ext_q_workers_by_machine.csv"


def _cell(row) -> str:
    """``holds (2.85 [2.58, 2.94])``, or for an undecidable claim its reason up to the first colon."""
    if row["verdict"] == "cannot be tested here":
        return "cannot be tested: " + str(row["evidence"]).split(":")[0].strip()
    interval = row["interval"] if isinstance(row["interval"], str) and row["interval"] != "exact" else ""
    return f"{row['verdict']} ({row['estimate']:.3g}{' ' + interval if interval else ''})"


def _ledger(root: Path):
    import pandas as pd

    return pd.read_csv(root / MACHINE_LEDGER)


def machines_table(root: Path) -> str:
    """One row per claim, one column per machine: each claim's verdict with its estimate and 95 % interval, or why
    the machine's data cannot decide it; then Chapter 4's q(workers) per machine."""
    ledger = _ledger(root)
    machines = list(dict.fromkeys(ledger["machine"]))
    lines = ["| claim | " + " | ".join(machines) + " |", "|---|" + "---|" * len(machines)]
    for key, rows in ledger.groupby("key", sort=False):
        by = {r["machine"]: _cell(r) for _, r in rows.iterrows()}
        lines.append(f"| {rows['claim'].iloc[0]} (`{key}`) | " + " | ".join(by.get(m, "") for m in machines) + " |")
    out = "\n".join(lines) + "\n"
    q_path = root / Q_BY_MACHINE
    if q_path.exists():
        import pandas as pd

        q = pd.read_csv(q_path)
        out += ("\nChapter 4, eq. 4.4's workers exponent q on each machine's first "
                f"{int(q['rows'].min())} configurations (−1 is perfect scaling): "
                + "; ".join(f"{r.machine} {r.q_workers:+.2f} [{r.q_workers_lo:+.2f}, {r.q_workers_hi:+.2f}]"
                            for r in q.itertuples()) + ".\n")
    return out


def readme_machines(root: Path) -> str:
    """The README's line per machine: does training speed up with more workers, does aggregation time grow."""
    ledger = _ledger(root)
    parts = []
    for machine, rows in ledger.groupby("machine", sort=False):
        by = rows.set_index("key")
        said = [f"{words} {_cell(by.loc[key])}" for key, words in
                (("speedup", "speedup"), ("t_c_grows", "aggregation grows")) if key in by.index
                and by.loc[key, "verdict"] != "cannot be tested here"]
        parts.append(f"- {machine}: " + ("; ".join(said) if said else _cell(by.iloc[0])))
    return "\n".join(parts) + "\n"
