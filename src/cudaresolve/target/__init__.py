"""The machine to resolve for.

It holds the ``Target`` value, building it from flags, environment and host files, and detecting
this machine (NVML, nvidia-smi, /proc) through injectable sources.

May import: text, errors, core, db.
"""
