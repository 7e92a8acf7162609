"""An f64 scalar parameter does not fit the ABI's 32-bit parameter register (DESIGN section 4):
every language gets the same refusal at the parameter, not an internal error."""

from __future__ import annotations

import pytest

import wavegpu as wg
from wavegpu.compiler.frontends import FRONTENDS

SOURCES = {
    "python": "import wavegpu as wg\n\n@wg.kernel\ndef k(x: wg.f64, out: wg.f64[:]):\n    out[0] = x\n",
    "rust": "#[kernel]\nfn k(x: f64, out: &mut [f64]) {\n    out[0] = x;\n}\n",
    "cpp": "__kernel void k(double x, double* out) {\n    out[0] = x;\n}\n",
}


@pytest.mark.parametrize("lang", sorted(SOURCES))
def test_f64_scalar_parameter_is_refused_at_its_place(lang: str) -> None:
    if lang not in FRONTENDS:
        pytest.fail(f"no {lang} frontend registered: every language of LANGUAGES has one")
    with pytest.raises(wg.CompileError) as e:
        wg.compile(SOURCES[lang], lang=lang)
    text = str(e.value)
    assert "scalar parameter 'x' is f64" in text and "one-element f64 array" in text
    assert ":" in text.splitlines()[0] and "^" in text, text
    assert "internal error" not in text


def test_compile_takes_utf8_bytes_and_refuses_other_bytes() -> None:
    prog = wg.compile(b"#[kernel]\nfn k(o: &mut [u32]) {\n    o[0] = 1;\n}\n", lang="rust")
    assert prog.kernels[0].name == "k"
    with pytest.raises(wg.CompileError, match="not UTF-8 text"):
        wg.compile(b"\xff\xfe", lang="rust")
