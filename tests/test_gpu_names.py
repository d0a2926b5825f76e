"""GPU names: the shipped table, how --gpu text finds one GPU, and `cudaresolve gpus`."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from cudaresolve.cli import main
from cudaresolve.core.archs import ComputeCapability
from cudaresolve.db.database import load_compat
from cudaresolve.db.gpu_names import MatchKind, gpu_loose_key, gpu_name_key
from cudaresolve.errors import CudaResolveError, InvalidArch, InvalidInput, UnknownGpu
from cudaresolve.render.gpus import render_gpus
from cudaresolve.target.build import resolve_gpu, split_gpu_list

DB = load_compat()
ARCHS = {
    "Fermi", "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell", "Blackwell Ultra"
}


# -- the shipped table --------------------------------------------------------------------------


def test_the_table_covers_fermi_to_blackwell() -> None:
    assert len(DB.gpus) >= 200
    assert {g.arch for g in DB.gpus} == ARCHS  # the spellings other tables may key on
    assert min(g.cc for g in DB.gpus) == ComputeCapability(2, 0)  # older than every build: known, not unknown
    assert all(g.source for g in DB.gpus)


def test_every_name_and_alias_finds_its_own_row() -> None:
    for gpu in DB.gpus:
        for label in (gpu.name, *gpu.aliases):
            assert DB.find_gpu(label) is gpu, label


def _generation_pairs() -> list[tuple[str, str, str]]:
    """(text, older GPU, newer GPU) for every label "TEXT ARCH ..." of the table whose TEXT alone is the name of a
    GPU of another architecture (``RTX 6000`` / ``RTX 6000 Ada Generation``)."""
    pairs = []
    for gpu in DB.gpus:
        arch = gpu_name_key(gpu.arch)
        for label in (gpu.name, *gpu.aliases):
            key = gpu_name_key(label)
            for cut in range(1, len(key)):
                older = DB.find_gpu(" ".join(key[:cut])) if key[cut : cut + len(arch)] == arch else None
                if older is None and key[cut : cut + len(arch)] == arch:
                    found = DB.match_gpu(" ".join(key[:cut]))
                    older = next((c for c in found.candidates if c.arch != gpu.arch), None)
                if older is not None and older.arch != gpu.arch:
                    pairs.append((" ".join(key[:cut]), older.name, gpu.name))
    return sorted(set(pairs))


GENERATIONS = _generation_pairs()


def test_the_table_has_model_numbers_two_generations_share() -> None:
    assert {("rtx 6000", "Quadro RTX 6000"), ("titan x", "NVIDIA GeForce GTX TITAN X")} <= {p[:2] for p in GENERATIONS}


@pytest.mark.parametrize(("text", "older", "newer"), GENERATIONS)
def test_a_model_number_two_generations_share_is_ambiguous(text: str, older: str, newer: str) -> None:
    """Found by the hardware audit: ``--gpu "RTX 6000"`` meant the Turing Quadro RTX 6000 silently, so an RTX 6000
    Ada owner got a build without sm_89 code. The text names both; a brand or series word only one of them has
    (Quadro, GTX) tells them apart."""
    found = DB.match_gpu(text)
    assert found.kind is MatchKind.AMBIGUOUS and {older, newer} <= {g.name for g in found.candidates}


def test_a_short_name_other_generations_names_begin_with_is_ambiguous() -> None:
    """Found in review: ``--gpu TITAN`` silently meant the Kepler GTX TITAN (its name without the series word),
    though TITAN X, Xp, V and RTX, four other architectures, begin with it. Names whose longer forms share the
    architecture stay one GPU (``4090``: RTX 4090 D and the laptop part are Ada too)."""
    found = DB.match_gpu("TITAN")
    assert found.kind is MatchKind.AMBIGUOUS and len({g.arch for g in found.candidates}) >= 4
    for text in ("4090", "1080", "3090", "Orin", "GTX TITAN"):
        assert DB.find_gpu(text) is not None, text


@pytest.mark.parametrize(
    ("text", "name"),
    [("Quadro RTX 6000", "Quadro RTX 6000"), ("GTX TITAN X", "NVIDIA GeForce GTX TITAN X"),
     ("RTX 4090", "NVIDIA GeForce RTX 4090"), ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell")],
)  # fmt: skip
def test_a_brand_word_or_a_longer_name_is_no_ambiguity(text: str, name: str) -> None:
    found = DB.find_gpu(text)
    assert found is not None and found.name == name


@pytest.mark.parametrize(
    ("name", "cc", "datacenter", "tegra"),
    [
        ("GeForce GTX 980 Ti", "5.2", False, False),
        ("Jetson Nano", "5.3", False, True),
        ("Jetson TX2", "6.2", False, True),
        ("Quadro P6000", "6.1", False, False),
        ("Tesla M60", "5.2", True, False),
        ("Tesla P100-PCIE-12GB", "6.0", True, False),
        ("Quadro GV100", "7.0", False, False),
        ("Quadro RTX 6000", "7.5", False, False),
        ("GTX 1650", "7.5", False, False),
        ("NVIDIA RTX A2000 12GB", "8.6", False, False),
        ("RTX 2050", "8.6", False, False),  # an Ampere part despite its name
        ("RTX 3050 A Laptop GPU", "8.9", False, False),  # an Ada part despite its name
        ("NVIDIA RTX 2000 Ada Generation", "8.9", False, False),
        ("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9", False, False),
        ("RTX 5090 Laptop", "12.0", False, False),
        ("RTX PRO 4000 Blackwell", "12.0", False, False),
        ("NVIDIA H100 SXM5 94GB", "9.0", True, False),
        ("NVIDIA H800 80GB HBM3", "9.0", True, False),
        # MIG instances as NVML and GPU Feature Discovery name them: the GPU's own capability (hardware audit)
        ("NVIDIA A100-SXM4-40GB MIG 1g.5gb", "8.0", True, False),
        ("NVIDIA-A100-SXM4-40GB-MIG-3g.20gb", "8.0", True, False),
        ("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me", "9.0", True, False),
        ("NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb", "9.0", True, False),
        ("NVIDIA H100 80GB HBM3 MIG 1g.20gb-me", "9.0", True, False),
        ("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me.all", "9.0", True, False),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb+gfx", "12.0", True, False),
        # GPU Feature Discovery's product label of a time-sliced GPU, as `kubectl describe node` shows it
        ("Tesla-T4-SHARED", "7.5", True, False),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED", "8.0", True, False),
        # names users type or NVML prints that the 2026-11-26 audit found unknown
        ("NVIDIA A800 40GB Active", "8.0", False, False),
        ("NVIDIA T4G", "7.5", True, False),
        ("NVIDIA GeForce MX330", "6.1", False, False),
        ("MX110", "5.0", False, False),
        ("NVIDIA NVS 810", "5.0", False, False),
        ("Quadro K620M", "5.0", False, False),
        # names in NVIDIA's driver README (open-gpu-kernel-modules, 595.45.04) that the hardware audit found unknown
        ("NVIDIA PG509-210", "8.0", True, False),
        ("NVIDIA A100-PG509-200", "8.0", True, False),
        ("NVIDIA A800 80GB PCIe LC", "8.0", True, False),
        ("NVIDIA AX800", "8.0", True, False),
        ("NVIDIA H20-3e", "9.0", True, False),
        ("NVIDIA A10M", "8.6", True, False),
        ("NVIDIA L2", "8.9", True, False),
        ("NVIDIA RTX A4000H", "8.6", False, False),
        ("NVIDIA RTX 6000D", "12.0", False, False),
        ("NVIDIA CMP 30HX", "7.5", False, False),
        ("NVIDIA CMP 90HX", "8.6", False, False),
        ("NVIDIA DGX Display", "7.5", False, False),
        ("Matrox D-Series D2450", "7.5", False, False),
        ("NVIDIA RTX A500 Embedded GPU", "8.6", False, False),
        ("NVIDIA RTX 3500 Ada Generation Embedded GPU", "8.9", False, False),
        ("NVIDIA RTX PRO 500 Blackwell Embedded GPU", "12.0", False, False),
        ("NVIDIA HGX GB200", "10.0", True, False),  # the board's name in R570 drivers before 570.133.20
        ("NVIDIA PG506-243", "8.0", True, False),
        ("NVIDIA RTX PRO 6000D Blackwell Max-Q Workstation Edition", "12.0", False, False),
        ("EIZO Quadro MED-XN92", "7.5", False, False),
        # names real tools print for Volta and Maxwell boards that the hardware audit found unknown
        ("Tesla PG503-216", "7.0", True, False),
        ("Tesla PG500-216", "7.0", True, False),
        ("Tesla V100-SXM2-32GB-LS", "7.0", True, False),
        ("GeForce GTX 745", "5.0", False, False),
        ("NVIDIA GeForce 945M", "5.0", False, False),
        ("Quadro K2200M", "5.0", False, False),  # a Maxwell part (GM107GLM), not Kepler
        # Kepler and Fermi, older than every build
        ("GeForce 910M", "3.5", False, False),  # a GK208 die (pci.ids 129a), though NVIDIA's legacy page says 5.2
        ("Tesla K80", "3.7", True, False),
        ("Tesla K40c", "3.5", True, False),
        ("Tesla K20Xm", "3.5", True, False),
        ("NVIDIA GeForce GTX 780 Ti", "3.5", False, False),
        ("GeForce GTX 680", "3.0", False, False),
        ("GRID K520", "3.0", True, False),
        ("Quadro K5000", "3.0", False, False),
        ("GeForce GTX 580", "2.0", False, False),
    ],
)
def test_new_rows(name: str, cc: str, datacenter: bool, tegra: bool) -> None:
    gpu = DB.find_gpu(name)
    assert gpu is not None, name
    assert (str(gpu.cc), gpu.datacenter, gpu.tegra) == (cc, datacenter, tegra)


def test_db_check_passes_on_the_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "check", "src/cudaresolve/data/compat.toml"]) == 0
    assert f"{len(DB.gpus)} GPUs" in capsys.readouterr().err


# -- the normal form ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("NVIDIA GeForce RTX 3090", ("rtx", "3090")),
        ("RTX3090", ("rtx", "3090")),
        ("gtx_1080-ti", ("gtx", "1080", "ti")),
        ("Tesla V100-SXM2-16GB", ("v", "100")),
        ("Tesla V100-DGXS-32GB", ("v", "100")),  # DGX Station's V100 (pci.ids 1db7), as nvidia-smi prints it
        ("Tesla V100-FHHL-16GB", ("v", "100")),  # full height, half length (pci.ids 1db3)
        ("NVIDIA A100 80 GB PCIe", ("a", "100")),
        ("NVIDIA GH200 144G HBM3e", ("gh", "200")),
        ("Quadro RTX 5000 with Max-Q Design", ("rtx", "5000")),
        ("GeForce RTX 2080 Mobile", ("rtx", "2080", "laptop")),
        ("NVIDIA", ()),
    ],
)
def test_gpu_name_key(text: str, key: tuple[str, ...]) -> None:
    assert gpu_name_key(text) == key


def test_loose_key_drops_a_leading_series_word_only() -> None:
    assert gpu_loose_key(("rtx", "4090")) == ("4090",)
    assert gpu_loose_key(("titan", "rtx")) == ("titan", "rtx")
    assert gpu_loose_key(("rtx",)) == ("rtx",)


# -- --gpu text -> one GPU ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("RTX4090", "NVIDIA GeForce RTX 4090"),
        ("rtx 4090", "NVIDIA GeForce RTX 4090"),
        ("4090", "NVIDIA GeForce RTX 4090"),  # a model number, not SM 409.0
        ("GTX 1080Ti", "NVIDIA GeForce GTX 1080 Ti"),
        ("1080 Ti", "NVIDIA GeForce GTX 1080 Ti"),
        ("gtx-1080-ti", "NVIDIA GeForce GTX 1080 Ti"),
        ("1080", "NVIDIA GeForce GTX 1080"),
        ("A800", "NVIDIA A800"),
        ("a100-80gb", "NVIDIA A100"),
        ("A100 SXM4", "NVIDIA A100"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100"),
        ("A100-SXM4-40GB", "NVIDIA A100"),
        ("H100 PCIe", "NVIDIA H100"),
        ("v100 16GB", "Tesla V100"),
        ("Tesla V100-SXM2-16GB", "Tesla V100"),
        ("RTX 3090", "NVIDIA GeForce RTX 3090"),
        ("RTX A6000", "NVIDIA RTX A6000"),
        ("A6000", "NVIDIA RTX A6000"),
        ("Quadro RTX 6000", "Quadro RTX 6000"),
        ("RTX 6000 Ada", "NVIDIA RTX 6000 Ada Generation"),
        ("TITAN Xp", "NVIDIA TITAN Xp"),
        ("T4", "Tesla T4"),
        ("L40S", "NVIDIA L40S"),
        ("L40 S", "NVIDIA L40S"),
        ("Orin Nano", "NVIDIA Jetson Orin"),
        ("Jetson Orin", "NVIDIA Jetson Orin"),
        # a Jetson's board model, as jetson_release and the kernel's "Machine model" print it
        ("NVIDIA Jetson AGX Orin Developer Kit", "NVIDIA Jetson Orin"),
        ("NVIDIA Jetson Xavier NX Developer Kit", "NVIDIA Jetson AGX Xavier"),
        ("NVIDIA Jetson AGX Thor Developer Kit", "NVIDIA Jetson AGX Thor"),
        # JetPack 6's device-tree model of the Orin NX / Orin Nano reference carrier boards
        ("NVIDIA Jetson Orin NX Engineering Reference Developer Kit", "NVIDIA Jetson Orin"),
        ("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super", "NVIDIA Jetson Orin"),
        ("NVIDIA Jetson Orin Nano Super Developer Kit", "NVIDIA Jetson Orin"),  # NVIDIA's product name
        ("RTX 4090 Laptop", "NVIDIA GeForce RTX 4090 Laptop GPU"),
        ("RTX 4090 Mobile", "NVIDIA GeForce RTX 4090 Laptop GPU"),
    ],
)
def test_spellings_find_the_gpu(text: str, name: str) -> None:
    assert resolve_gpu(text, DB).name == name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("GRID T4-16Q", "Tesla T4"),
        ("T4-8C", "Tesla T4"),
        ("NVIDIA A10-24Q", "NVIDIA A10"),
        ("NVIDIA L40S-48Q", "NVIDIA L40S"),
        ("NVIDIA L4-24Q", "NVIDIA L4"),
        ("NVIDIA A100-40C", "NVIDIA A100"),
        ("GRID A100D-4C", "NVIDIA A100"),  # a board code's variant letter
        ("NVIDIA H100XM-80C", "NVIDIA H100"),
        ("NVIDIA H100L-94C", "NVIDIA H100"),
        ("GRID V100DX-32Q", "Tesla V100"),
        ("A100X-40C", "NVIDIA A100X"),  # a board code that is a name keeps it
        ("NVIDIA RTX A6000-48Q", "NVIDIA RTX A6000"),
        ("A10-4A", "NVIDIA A10"),
        ("NVIDIA A100-4-20C", "NVIDIA A100"),  # a MIG-backed type: compute slices, then frame buffer
        ("GRID A100-7-40C", "NVIDIA A100"),
        ("A100DX-1-10C", "NVIDIA A100"),
        ("NVIDIA H100-1-10C", "NVIDIA H100"),
        ("A30-2-12C", "NVIDIA A30"),
        ("A100-1-5CME", "NVIDIA A100"),  # with media extensions
        ("GRID A100 40C", "NVIDIA A100"),  # a GFD label (GRID-A100-40C) read back with spaces
        ("NVIDIA A100 4 20C", "NVIDIA A100"),
        ("GRID T4 16Q", "Tesla T4"),
    ],
)
def test_a_vgpu_type_finds_its_board(text: str, name: str) -> None:
    """A virtual machine's driver reports its vGPU type (board, frame buffer, series): the board's GPU."""
    assert resolve_gpu(text, DB).name == name
    assert resolve_gpu(text.lower(), DB).name == name


@pytest.mark.parametrize("text", ["FOO-16Q", "RTX6000P-24C", "-16Q", "A100D"])
def test_what_is_no_vgpu_type_of_one_board_stays_unknown(text: str) -> None:
    """No board, a board code whose base names two GPUs (Quadro RTX 6000 and RTX 6000 Ada), or a board code outside
    a vGPU type."""
    with pytest.raises(UnknownGpu):
        resolve_gpu(text, DB)


@pytest.mark.parametrize(
    ("text", "cc"),
    [
        ("sm89", "8.9"),
        ("sm_89", "8.9"),
        ("SM 8.9", "8.9"),
        ("8.6", "8.6"),
        ("86", "8.6"),
        ("sm_86", "8.6"),
        ("120", "12.0"),
    ],
)
def test_capabilities(text: str, cc: str) -> None:
    gpu = resolve_gpu(text, DB)
    assert str(gpu.cc) == cc and gpu.name == gpu.cc.sm


@pytest.mark.parametrize("text", ["Jetson AGX", "GB"])
def test_a_name_that_could_mean_several_gpus_is_an_error_listing_them(text: str) -> None:
    assert DB.match_gpu(text).kind is MatchKind.AMBIGUOUS
    with pytest.raises(UnknownGpu) as info:
        resolve_gpu(text, DB)
    assert info.value.message.startswith(f"{text!r} could be any of these GPUs: ")
    assert info.value.hint == "give one of these names, or the compute capability, e.g. --gpu 8.6"


@pytest.mark.parametrize(("text", "count"), [("RTX", 94), ("GTX", 45), ("RTX PRO", 13), ("Quadro RTX", 5)])
def test_a_word_many_names_share_lists_the_closest_few_and_the_count(text: str, count: int) -> None:
    candidates = DB.match_gpu(text).candidates
    with pytest.raises(UnknownGpu) as info:
        resolve_gpu(text, DB)
    if len(candidates) <= 8:  # few: every one is listed
        assert info.value.message.startswith(f"{text!r} could be any of these GPUs: ")
        assert info.value.message.count("'") == 2 * (len(candidates) + 1)
        return
    assert len(candidates) >= count
    head, _, listed = info.value.message.partition("; the closest: ")
    assert head == f"{text!r} could be any of {len(candidates)} GPUs"
    offered = [name.strip("' ") for name in listed.split(",")]
    assert len(offered) == 4 and len(info.value.message) < 200  # one short line, not a hundred names
    for name in offered:  # each one offered is a name --gpu takes, one of the candidates
        assert resolve_gpu(name, DB).name in {g.name for g in candidates}


def test_ambiguity_names_the_candidates() -> None:
    with pytest.raises(UnknownGpu) as info:
        resolve_gpu("Jetson AGX", DB)
    assert info.value.message == ("'Jetson AGX' could be any of these GPUs: 'NVIDIA Thor', 'Orin (nvgpu)', 'Xavier'")
    for name in ("NVIDIA Thor", "Orin (nvgpu)", "Xavier"):  # what the message offers, --gpu takes
        assert resolve_gpu(name, DB).tegra


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("RTX 3090 RTX 5090", "'RTX 3090', 'RTX 5090'"),
        ("A800 H100", "'A800', 'H100'"),
        ("A800;H100", "'A800', 'H100'"),
    ],
)
def test_a_text_naming_two_gpus_is_refused_never_truncated(text: str, names: str) -> None:
    with pytest.raises(InvalidInput) as info:
        resolve_gpu(text, DB)
    assert info.value.message == f"{text!r} names more than one GPU: {names}"
    assert info.value.hint is not None and "--gpu '" in info.value.hint


def test_an_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(UnknownGpu) as info:
        resolve_gpu("RTX 4099", DB)
    assert info.value.message == "unknown GPU: 'RTX 4099'; did you mean 'RTX 4090', 'RTX 5090', 'RTX 4080'?"
    assert info.value.code == "unknown-gpu"
    for name in ("RTX 4090", "RTX 5090", "RTX 4080"):
        resolve_gpu(name, DB)


def test_a_bare_number_is_a_capability_only_below_major_20() -> None:
    assert resolve_gpu("3090", DB).name == "NVIDIA GeForce RTX 3090"
    with pytest.raises(UnknownGpu) as info:
        resolve_gpu("800", DB)  # not SM 80.0
    assert info.value.message == "unknown GPU: '800'; did you mean 'H800', 'A800', 'AX800'?"


def test_an_unknown_name_without_close_names() -> None:
    with pytest.raises(UnknownGpu) as info:
        resolve_gpu("Radeon RX 7900", DB)
    assert info.value.message == "unknown GPU: 'Radeon RX 7900'"
    assert info.value.hint is not None and "cudaresolve gpus" in info.value.hint


@pytest.mark.parametrize(("text", "error"), [("sm_90a", InvalidArch), ("compute_86", InvalidArch), ("", InvalidInput)])
def test_bad_capabilities_stay_errors(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        resolve_gpu(text, DB)


def _gpu_or_coded_error(text: str) -> None:
    try:
        gpu = resolve_gpu(text, DB)
    except CudaResolveError as err:
        assert err.code and err.message
    else:
        assert gpu.cc.major >= 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_gpu_or_a_coded_error(text: str) -> None:
    _gpu_or_coded_error(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["RTX", "4090", "A", "100", "GTX", "1080", "Ti", "H", "-", " ", "80GB", "sm"]), max_size=8)
)
def test_name_like_text_is_a_gpu_or_a_coded_error(parts: list[str]) -> None:
    _gpu_or_coded_error(" ".join(parts))


def test_split_gpu_list_separators() -> None:
    assert split_gpu_list("A800;H100") == ("A800", "H100")
    assert split_gpu_list("RTX 3090 and RTX 5090") == ("RTX 3090", "RTX 5090")
    assert split_gpu_list(" RTX 2080 ,RTX 3090,, ") == ("RTX 2080", "RTX 3090")
    assert split_gpu_list("Jetson Orin Nano") == ("Jetson Orin Nano",)


def test_a_count_before_a_name_gives_that_many_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    """Found against uv on real PyPI: ``--gpu "2x A100,1x T4"``, the form ``plan`` prints a pool in, was
    ``unknown-gpu``."""
    assert split_gpu_list("2x A100, 1x T4") == ("A100", "A100", "T4")
    assert split_gpu_list("8 x H100") == ("H100",) * 8
    assert split_gpu_list("2\u00d7L4") == ("L4", "L4")
    assert split_gpu_list("1000000x A100") == ("1000000x A100",)  # no machine holds that many: no count
    assert split_gpu_list("0x A100") == ("0x A100",)
    assert split_gpu_list("3 Xavier NX") == ("3 Xavier NX",)  # review: not three "avier NX"
    assert split_gpu_list("3x Xavier NX") == ("Xavier NX",) * 3
    assert main(["detect", "--gpu", "2x A100,1x T4", "--driver", "550.54.15", "--json"]) == 0
    gpus = json.loads(capsys.readouterr().out)["target"]["gpus"]
    assert [g["cc"] for g in gpus] == ["8.0", "8.0", "7.5"]
    assert main(["arch-list", "--gpu", "1000000x A100"]) == 1
    assert capsys.readouterr().err.startswith("error: unknown-gpu")


def test_cli_gpu_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arch-list", "--gpu", "A800;H100", "--gpu", "RTX4090", "--gpu", "sm_86"]) == 0
    assert capsys.readouterr().out.strip() == "8.0;8.6;8.9;9.0"
    assert main(["arch-list", "--gpu", "RTX 3090 RTX 5090"]) == 1
    assert capsys.readouterr().err.startswith("error: invalid-input: 'RTX 3090 RTX 5090' names more than one GPU")


# -- cudaresolve gpus ---------------------------------------------------------------------------


def test_gpus_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"schema", "gpus"} and data["schema"] == 1
    assert len(data["gpus"]) == len(DB.gpus)
    assert all(set(g) == {"name", "cc", "arch", "datacenter", "tegra", "aliases"} for g in data["gpus"])
    orin = next(g for g in data["gpus"] if g["name"] == "NVIDIA Jetson Orin")
    assert orin["cc"] == "8.7" and orin["tegra"] is True and "Jetson Orin Nano" in orin["aliases"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("a100", {"NVIDIA A100"}),
        ("h-100", {"NVIDIA H100"}),
        ("Hopper", {"NVIDIA GH200", "NVIDIA H200", "NVIDIA H100", "NVIDIA H800", "NVIDIA H20"}),
        ("10.3", {"NVIDIA GB300", "NVIDIA B300"}),
        ("nomatch", set()),
        ("sm_103", {"NVIDIA GB300", "NVIDIA B300"}),  # as --gpu takes a compute capability
        ("SM103", {"NVIDIA GB300", "NVIDIA B300"}),
        ("[", set()),  # no letter or digit: no GPU, never the whole list
        ("-", set()),
    ],
)
def test_gpus_pattern(pattern: str, expected: set[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", pattern, "--json"]) == 0
    names = {g["name"] for g in json.loads(capsys.readouterr().out)["gpus"]}
    if pattern == "a100":
        assert "NVIDIA A100" in names and "NVIDIA RTX 6000 Ada Generation" not in names
    else:
        assert names == expected


def test_gpus_table_fits_80_columns() -> None:
    out = StringIO()
    render_gpus(DB.list_gpus(), Console(file=out, width=200, color_system=None), lang="en")
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split() == ["GPU", "CC", "arch", "kind", "also", "accepted"]
    assert any("NVIDIA Jetson Orin" in line and "Jetson" in line for line in lines)
    assert lines[-1].startswith(f"{len(DB.gpus)} GPUs")


def test_gpus_none_and_chinese() -> None:
    out = StringIO()
    render_gpus(DB.list_gpus("zzz"), Console(file=out, width=80, color_system=None), lang="en")
    assert out.getvalue().strip() == "no GPU the database knows matches 'zzz'"
    out = StringIO()
    render_gpus(DB.list_gpus("L40S"), Console(file=out, width=80, color_system=None), lang="zh")
    assert "计算能力" in out.getvalue() and "数据中心" in out.getvalue()
