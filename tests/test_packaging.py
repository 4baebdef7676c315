"""One installed package, ``cctv``: the checkout's ``reducer/``, ``widgets/`` and
``viewer/`` install as ``cctv.reducer``, ``cctv.widgets`` and ``cctv.viewer``,
and nothing else lands at the top of site-packages."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
TOPS = {"reducer": "cctv.reducer", "widgets": "cctv.widgets", "viewer": "cctv.viewer"}


def _config() -> dict:
    return tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_of_the_checkout_is_installed_under_cctv() -> None:
    config = _config()
    assert config["package-dir"] == {package: folder for folder, package in TOPS.items()}
    folders = sorted(
        ".".join((TOPS[init.relative_to(CHECKOUT).parts[0]],
                  *init.parent.relative_to(CHECKOUT).parts[1:]))
        for top in TOPS for init in (CHECKOUT / top).rglob("__init__.py"))
    assert sorted(config["packages"]) == folders
    assert not (CHECKOUT / "cctv").exists(), "a cctv/ folder in the checkout would shadow the installed package"


def test_the_console_script_is_the_packaged_cli() -> None:
    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"cctv": "cctv.viewer.cli:main"}


def test_an_installed_cctv_has_one_top_level_package() -> None:
    """What ``pip install .`` put in site-packages: ``cctv`` and its metadata."""
    from cctv import viewer

    site = Path(viewer.__file__).resolve().parents[2]
    if site == CHECKOUT.parent:
        pytest.skip("an editable install (its finder is a module of its own): see .ci/run for the plain one")
    (dist,) = metadata.distributions(name="cctv", path=[str(site)])
    files = [str(f) for f in dist.files or ()]
    tops = {f.split("/")[0] for f in files if not f.startswith("..")}
    tops = {t for t in tops if not t.endswith(".dist-info") and t != "__pycache__"}
    assert tops == {"cctv"}, tops
