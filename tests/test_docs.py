"""The documentation stays true: generated blocks are current, named paths exist, named commands and options exist.

Pages checked: every ``docs/*.md``, ``README.md`` and ``CHANGELOG.md``. Nothing here fits a model or runs a
notebook.
"""
import re
import shlex
from pathlib import Path

import pytest

from perfkit.cli import COMMANDS, build_parser
from perfkit.pages import blocks as docs

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(ROOT.glob("docs/*.md")) + [ROOT / "README.md", ROOT / "CHANGELOG.md"]

#: the repository's top folders whose paths the pages name
ROOTS = ("notebooks", "perfkit", "data", "docs", "figures", "benchmarks", "tests", ".ci")

#: paths the pages name that do not exist in a clone, because a command creates them: everything under build/
#: (`make reproduce`, `make teaching`: executed notebooks, caches, run_environment.json), under .envs/
#: (`make frameworks`: the framework environments), and perfkit/_data and perfkit/_notebooks (the copies of
#: data/ and notebooks/ that `pip install .` puts inside the installed package: pyproject.toml)
CREATED = (r"build(/.*)?", r"\.envs(/.*)?", r"perfkit/_data", r"perfkit/_notebooks")


def _code(text: str) -> list[str]:
    """Every inline code span and every fenced block of a Markdown page (a fenced block's text with its
    line continuations joined)."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    rest = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    return [b.replace("\\\n", " ") for b in fenced] + re.findall(r"`([^`\n]+)`", rest)


def _links(text: str) -> list[str]:
    """The targets of Markdown links that are not URLs or mail addresses."""
    text = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def _exists(pattern: str) -> bool:
    """Whether a named path exists: ``<placeholder>``, ``chN``, ``…`` and ``*`` match any text of a name."""
    pattern = pattern.rstrip("/.,;:")
    if any(re.fullmatch(c, pattern) for c in CREATED):
        return True
    glob = re.sub(r"<[^>]*>|\*|…", "*", pattern)
    glob = re.sub(r"(?<![a-z])chN", "ch*", glob).replace("chN", "*")
    return any(ROOT.glob(glob)) if "*" in glob else (ROOT / pattern).exists()


def _named_paths(page: Path) -> set:
    text = page.read_text()
    names = set()
    for span in _code(text):
        for token in re.split(r"[\s`'\"(),=\[\]{}]+", span):
            if re.match(rf"({'|'.join(map(re.escape, ROOTS))}|build|\.envs)/", token):
                names.add(token)
    return names


@pytest.mark.parametrize("block", list(docs.BLOCKS), ids=lambda b: f"{b.page}:{b.name}")
def test_generated_block_is_current(block):
    text = (ROOT / block.page).read_text()
    assert docs.current_block(text, block.begin, block.end, block.page) == block.make(ROOT), (
        f"{block.page}: the generated {block.name} is stale; run `{block.command}`")


def test_a_stale_block_is_found(tmp_path):
    """stale() compares the page with what would be written: an edited block is stale, write() mends it."""
    import shutil

    for sub in ("docs", "figures", "notebooks", "benchmarks/results"):
        shutil.copytree(ROOT / sub, tmp_path / sub)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    page = tmp_path / "docs/chapters.md"
    page.write_text(page.read_text().replace("| Table 3.2 |", "| Table 3.9 |", 1))
    (tmp_path / "figures/ch5/table5_3.csv").unlink()
    assert {(b.page, b.name) for b in docs.stale(tmp_path)} >= {("docs/chapters.md", "thesis index"),
                                                                ("docs/results.md", "results")}
    assert "docs/chapters.md" in docs.write(tmp_path)
    assert docs.stale(tmp_path) == []
    index = docs.thesis_index(tmp_path)
    assert "| Table 5.3 | 3D-ResAttNet-18: MAPE of DE vs random forest | — | not in `figures/`" in index


def test_the_index_covers_every_registered_thesis_item():
    """Every thesis table and figure of the registries has a row, with files or marked not reproduced; every
    file of figures/ but the findings is in the index, and every one is in the results page."""
    from perfkit.chapters import CHAPTERS

    index, results = docs.thesis_index(ROOT), docs.results_page(ROOT)
    for label, stem, _ in docs.thesis_tables():
        if any(any((ROOT / "figures" / ch).glob(f"{stem}*")) for ch in CHAPTERS):
            assert f"| {label} |" in index, label
    for chapter, items in docs.thesis_figures().items():
        for number, _ in items:
            assert f"| Fig. {number} |" in index, number
    for chapter in CHAPTERS:
        for out in docs.outputs(ROOT, chapter):
            assert out.link("../") in results, out.stem
            if out.kind != "findings":
                assert out.link("../") in index, out.stem


def test_every_output_is_located_in_its_notebook():
    """The index finds the notebook cell (or section) that shows each file of figures/ but the findings."""
    from perfkit.chapters import CHAPTERS

    unshown = [f"{ch}/{out.stem}" for ch in CHAPTERS for out in docs.outputs(ROOT, ch)
               if out.kind != "findings" and docs.notebook_map(ch, ROOT).locate(out.stem) is None]
    assert unshown == []


def test_notebook_cells_are_read_from_their_code():
    nb = docs.notebook_map("ch3", ROOT)
    assert nb.locate("table3_2") == ("§1", "s1-tables")  # a literal
    assert nb.locate("fig3_5_speedup_cnn_measured") == ("§4", "s4-measured")  # name.endswith + "…" in name
    assert nb.locate("fig3_5_speedup_cnn_eq3_7") == ("§4", "s4-eq37")
    assert nb.locate("claims_ch3") == ("§8", "s8-claims")  # result.claims
    assert docs.notebook_map("ch4", ROOT).locate("ext_de_pred_vs_measured_jax") == ("§2", "s2-table")  # figures_of
    assert docs.notebook_map("ch6", ROOT).locate("table6_4_whatif_ch4") == ("§6", "s6-whatif")  # an f-string
    assert docs.notebook_map("ch6", ROOT).locate("table6_2_candidates") == ("§3", None)  # the section's heading
    assert nb.locate("no_such_output") is None


def test_block_markers_are_checked():
    with pytest.raises(ValueError, match="marker"):
        docs.replace_block("no markers here", "<!-- a -->", "<!-- end -->", "x\n", "page.md")
    assert docs.replace_block("a\n<!-- a -->\nold\n<!-- end -->\nb", "<!-- a -->", "<!-- end -->", "new\n") == \
        "a\n<!-- a -->\nnew\n<!-- end -->\nb"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_repository_paths_exist(page):
    missing = sorted(p for p in _named_paths(page) if not _exists(p))
    assert missing == [], f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


def _anchors(page: Path) -> set:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats -1…"""
    seen, out = {}, set()
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")
        out.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_reach_existing_files_and_headings(page):
    bad = []
    for target in _links(page.read_text()):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            bad.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            bad.append(target)
    assert bad == [], f"{page.relative_to(ROOT)}: links to missing files or headings: {bad}"


def _make_targets() -> tuple[set, set]:
    """The Makefile's targets and its variables."""
    text = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w.-]+(?: [\w.-]+)*)\s*:(?!=)", text, re.M))
    targets = {t for line in targets for t in line.split()}
    variables = set(re.findall(r"^([A-Z_]+)\s*[?:]?=", text, re.M)) | set(re.findall(r"\$\(([A-Z_]+)\)", text))
    return targets, variables


def _make_calls(page: Path) -> list[tuple[str, list]]:
    """``(target, [VARIABLE, …])`` for every ``make TARGET [VAR=value …]`` in the page's code."""
    calls = []
    for span in _code(page.read_text()):
        for m in re.finditer(r"(?<![\w.-])make ([a-z][\w-]*)((?: +[A-Z_]+=\S+)*)", span):
            calls.append((m[1], re.findall(r"([A-Z_]+)=", m[2])))
    return calls


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_make_targets_exist(page):
    targets, variables = _make_targets()
    bad = [f"make {t}" for t, _ in _make_calls(page) if t not in targets]
    bad += [f"make {t} {v}=" for t, vs in _make_calls(page) for v in vs if v not in variables]
    assert bad == [], f"{page.relative_to(ROOT)} names make targets or variables the Makefile lacks: {bad}"


def _subparsers() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return {"": parser, **action.choices}


def _perfkit_calls(page: Path) -> list[tuple[str, list]]:
    """``(subcommand, [--option, …])`` for every ``perfkit …`` command line in the page's code: the words after
    ``perfkit`` up to the end of the command (a comment, ``;``, ``|``, ``&``, ``>`` or the end of the line)."""
    calls = []
    for span in _code(page.read_text()):
        for line in span.splitlines():
            line = re.sub(r"(^|\s)#.*", "", line)  # a comment of a shell or Python line
            for m in re.finditer(r"(?:^|[\s/(])perfkit ((?:[^#;|&>\n])*)", line):
                if re.search(r"\b(import|from)\b", line[:m.start() + 1]):
                    continue  # Python's `import perfkit as pk`, not the command
                try:
                    words = shlex.split(m[1])
                except ValueError:
                    words = m[1].split()
                sub = words[0] if words and not words[0].startswith("-") else ""
                calls.append((sub, [w.split("=")[0] for w in words if re.match(r"--[a-z]", w)]))
    return calls


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_perfkit_commands_and_options_exist(page):
    parsers = _subparsers()
    bad = []
    for sub, options in _perfkit_calls(page):
        if sub and sub not in COMMANDS:
            if re.fullmatch(r"[a-z]+", sub):  # a word that is not a subcommand ("perfkit fit" is; "perfkit's" no)
                bad.append(f"perfkit {sub}")
            continue
        known = parsers[sub]._option_string_actions
        bad += [f"perfkit {sub} {o}".replace("  ", " ") for o in options if o not in known]
    assert bad == [], f"{page.relative_to(ROOT)} names perfkit commands or options that do not exist: {bad}"


def test_the_checks_find_what_is_wrong(tmp_path):
    """The path, make and perfkit checks fail on a page that names what does not exist."""
    page = tmp_path / "bad.md"
    page.write_text("Run `make reproduce QUICK=1` and `make nosuchtarget`, then `.venv/bin/perfkit fit data.csv "
                    "--no-such-flag` and `perfkit nosuchcommand`; read `perfkit/no_such_module.py` and "
                    "`figures/chN/findings_chN.md`.\n\n```bash\nmake reproduce NOSUCHVAR=1\n```\n")
    targets, variables = _make_targets()
    assert [t for t, _ in _make_calls(page) if t not in targets] == ["nosuchtarget"]
    assert [v for _, vs in _make_calls(page) for v in vs if v not in variables] == ["NOSUCHVAR"]
    assert ("fit", ["--no-such-flag"]) in _perfkit_calls(page)
    assert ("nosuchcommand", []) in _perfkit_calls(page)
    assert "--no-such-flag" not in _subparsers()["fit"]._option_string_actions
    assert sorted(p for p in _named_paths(page) if not _exists(p)) == ["perfkit/no_such_module.py"]


def test_docs_index_covers_the_guide():
    """docs/README.md links every page of docs/ and the CHANGELOG."""
    index = (ROOT / "docs/README.md").read_text()
    linked = {Path(t.partition("#")[0]).name for t in _links(index)}
    pages = {p.name for p in ROOT.glob("docs/*.md")} - {"README.md"}
    assert pages - linked == set()
    assert "CHANGELOG.md" in linked


#: long options the pages name that belong to other programs, not to `perfkit`: `jupyter lab` (--allow-root,
#: --no-browser, --port), papermill (--help-notebook), pip (--no-deps), torchrun (--nnodes, --nproc-per-node,
#: --nproc_per_node, --rdzv-*), Slurm's srun (--ntasks-per-node), `dask worker` (--nworkers, --nthreads), pytest-xdist
#: (--maxprocesses, in the measured test command), and the PyTorch adapter run under torchrun (`python -m
#: perfkit.measure.adapters.pytorch --requests --results`)
OTHER_PROGRAMS_OPTIONS = {"--allow-root", "--no-browser", "--port", "--help-notebook", "--no-deps", "--nnodes",
                          "--nproc-per-node", "--nproc_per_node", "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id",
                          "--ntasks-per-node", "--nworkers", "--nthreads", "--requests", "--results", "--maxprocesses"}


def _all_options() -> set:
    return {o for parser in _subparsers().values() for o in parser._option_string_actions}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_long_option_named_is_an_option_of_some_command(page):
    """A `--flag` named on its own (in prose or a command) is an option of a perfkit subcommand, or of one of
    the other programs the pages run (so a renamed perfkit option cannot linger in the prose)."""
    named = {o for span in _code(page.read_text()) for o in re.findall(r"(?<![\w-])--[a-z][\w-]*", span)}
    assert sorted(named - _all_options() - OTHER_PROGRAMS_OPTIONS) == []


def _defined(module: Path) -> set:
    """The names a module defines or imports at its top level (under ``if TYPE_CHECKING:`` too)."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _resolves(dotted: str) -> bool:
    """Whether ``perfkit.a.b.name`` names a module of the package, or a name its module defines (read, not
    imported)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file():
            return i == len(parts) or parts[i] in _defined(module)
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_python_objects_exist(page):
    """Every `perfkit.module.name` named resolves, and every `pk.name` is exported by `perfkit`."""
    import perfkit

    spans = _code(page.read_text())
    dotted = {d for s in spans for d in re.findall(r"(?<![\w./])perfkit(?:\.\w+)+", s)}
    pk = {n for s in spans for n in re.findall(r"(?<![\w.])pk\.(\w+)", s)}
    assert sorted(d for d in dotted if not _resolves(d)) == []
    assert sorted(pk - set(perfkit.__all__)) == []


def test_the_object_check_finds_missing_names():
    assert _resolves("perfkit.report.output.agrees") and _resolves("perfkit.measure.cluster")
    assert not _resolves("perfkit.report.output.no_such_name") and not _resolves("perfkit.no_such_module")


def test_layout_names_existing_modules():
    """Every module docs/layout.md names in a package's row lies in that package."""
    missing = []
    for line in (ROOT / "docs/layout.md").read_text().splitlines():
        row = re.match(r"\| `(perfkit/[\w/]*)` \|(.*)\|\s*$", line)
        for name in re.findall(r"`([\w./]+\.py)`", row[2]) if row else ():
            folder = ROOT / row[1]
            if not (folder / name).is_file() and not any(folder.rglob(Path(name).name)):
                missing.append(f"{row[1]}{name}")
    assert missing == []


def test_perfkit_docs_check_fails_on_a_stale_block(monkeypatch, capsys):
    """`perfkit docs --check` exits with 2 naming the stale block and the command that mends it; 0 when none is."""
    from perfkit.cli import main

    block = docs.BLOCKS[1]
    monkeypatch.setattr(docs, "stale", lambda root=None: [block])
    assert main(["docs", "--check"]) == 2
    err = capsys.readouterr().err
    assert f"{block.page} ({block.name})" in err and "perfkit docs --write" in err
    monkeypatch.setattr(docs, "stale", lambda root=None: [])
    assert main(["docs", "--check"]) == 0
