"""`make demo`: assemble the vector-add example, show its disassembly and metadata."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.syntax import Syntax

import wavegpu as wg

HERE = Path(__file__).parent


def main() -> None:
    con = Console()
    src = HERE / "vector_add.wave"
    prog = wg.assemble(src.read_text(), str(src))
    data = prog.to_bytes()
    con.rule(f"[bold]{src.name}[/] -> {len(data)} bytes of .wbin")
    back = wg.Program.from_bytes(data)
    text = wg.disassemble(back)
    con.print(Syntax(text, "asm", theme="ansi_dark", line_numbers=True))
    assert wg.assemble(text).to_bytes() == data, "disassembly must reassemble to identical bytes"
    con.print("[green]round trip:[/] disassembly reassembles to identical bytes")
    k = back.kernel("vector_add")
    con.print(
        f"kernel [bold]{k.name}[/]: {len(k.instructions)} instructions, {k.registers} registers, "
        f"{k.predicates} predicate(s), local memory {k.local_memory} B, workgroup hint {k.workgroup_size}"
    )
    for i, p in enumerate(k.params):
        con.print(f"  r{i} = {p.name} ({p.kind}, {p.dtype.text})")
    con.print(
        f"emulated device: wave width {wg.get_capability('emulator', 'WAVE_WIDTH')}, "
        f"MAX_WORKGROUP_SIZE {wg.get_capability('emulator', 'MAX_WORKGROUP_SIZE')}"
    )


if __name__ == "__main__":
    main()
