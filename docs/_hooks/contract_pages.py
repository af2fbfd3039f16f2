"""MkDocs hook: one reference page per installed contract, generated from its catalogue at
build time (``contracts/NAME.md``), so the site can never disagree with the kit."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any) -> Files:
    from fencepost.explain import contract_markdown
    from fencepost.registry import contract_named, contract_names

    for name in contract_names():
        files.append(File.generated(config, f"contracts/{name}.md",
                                    content=contract_markdown(contract_named(name))))
    return files
