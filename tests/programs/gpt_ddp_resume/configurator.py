"""
Poor Man's Configurator, lifted from nanoGPT with two small changes:
  * --flag=True / --flag=False also accept lowercase true/false
  * unknown keys raise, same as upstream

Usage from train.py:
>>> exec(open('configurator.py').read())
"""

import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if '=' not in arg:
        # assume it's the name of a config file
        assert not arg.startswith('--'), f"bad argument {arg}"
        config_file = arg
        print(f"Overriding config with {config_file}:")
        with open(config_file) as f:
            print(f.read())
        exec(open(config_file).read())
    else:
        # assume it's a --key=value argument
        assert arg.startswith('--')
        key, val = arg.split('=', 1)
        key = key[2:]
        if key in globals():
            if val in ('true', 'false'):
                val = val.capitalize()
            try:
                attempt = literal_eval(val)
            except (SyntaxError, ValueError):
                attempt = val
            # ensure the types match ok
            assert type(attempt) == type(globals()[key]), f"type mismatch for {key}: {type(attempt)} vs {type(globals()[key])}"
            print(f"Overriding: {key} = {attempt}")
            globals()[key] = attempt
        else:
            raise ValueError(f"Unknown config key: {key}")
