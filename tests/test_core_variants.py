"""The one parser of variant names (core/variants.py): cpu, cuXY, rocmX.Y, and the tag at the start of a local label."""

from __future__ import annotations

import pytest

from cudaresolve.core.variants import Variant, VariantKind, is_variant, parse_variant, variant_of_local
from cudaresolve.core.versions import CudaVersion
from cudaresolve.errors import InvalidInput
from cudaresolve.text.catalogue import format_text


@pytest.mark.parametrize(
    ("text", "kind", "version", "cuda", "family"),
    [
        ("cpu", VariantKind.CPU, (), None, "cpu"),
        ("cu92", VariantKind.CUDA, (9, 2), CudaVersion(9, 2), "cuda9"),
        ("cu118", VariantKind.CUDA, (11, 8), CudaVersion(11, 8), "cuda11"),
        ("cu128", VariantKind.CUDA, (12, 8), CudaVersion(12, 8), "cuda12"),
        ("cu130", VariantKind.CUDA, (13, 0), CudaVersion(13, 0), "cuda13"),
        ("rocm6.2", VariantKind.ROCM, (6, 2), None, "rocm"),
        ("rocm6.2.4", VariantKind.ROCM, (6, 2, 4), None, "rocm"),
    ],
)
def test_parse_variant(
    text: str, kind: VariantKind, version: tuple[int, ...], cuda: CudaVersion | None, family: str
) -> None:
    parsed = parse_variant(text)
    assert parsed == Variant(name=text, kind=kind, version=version)
    assert (parsed.cuda, parsed.family, str(parsed)) == (cuda, family, text)
    assert is_variant(text)


@pytest.mark.parametrize(
    "text", ["", "cu", "cu1", "cu1180", "CU118", "cuda12", "rocm", "xpu", "cpu.cxx11.abi", "cu118 "]
)
def test_other_text_is_not_a_variant(text: str) -> None:
    assert not is_variant(text)
    with pytest.raises(InvalidInput) as info:
        parse_variant(text)
    assert info.value.message == f"not a variant name: {text!r}"
    assert info.value.hint is not None and "cu118" in info.value.hint
    assert format_text(info.value.text, "zh") == f"不是变体名：{text!r}"  # noqa: RUF001


@pytest.mark.parametrize(
    ("local", "expected"),
    [
        ("cu118", "cu118"),
        ("cu124torch2.6", "cu124"),
        ("cpu.cxx11.abi", "cpu"),
        ("rocm6.2", "rocm6.2"),
        ("cu1180", None),  # a longer number is not cu118
        ("torch2.6cu124", None),  # the tag must come first
        ("", None),
        (None, None),
    ],
)
def test_variant_of_local(local: str | None, expected: str | None) -> None:
    found = variant_of_local(local)
    assert (found.name if found else None) == expected
