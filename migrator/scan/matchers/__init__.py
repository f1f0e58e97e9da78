"""One module per matcher kind of the rule schema; the context pass calls each at its nodes.

    call, reference      reference.py       import           imports.py
    method               method.py          argument         argument.py
    builtin-call         builtin.py         option-default   option_default.py
    device-index         device_index.py    device-string, backend-string, string   strings.py
    mask-index           mask_index.py
    text (non-Python files)                 engine.scan_text

Each `match(ctx, ...)` reads the context (`ctx`, a `Context`) and adds candidates with
`ctx.add(rule, node, **values)`.
"""
