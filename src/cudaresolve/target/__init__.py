"""The target: the GPUs, driver, platform and Python to resolve for, and where they come from.

``model`` (the ``Target`` value), ``build`` (flags > host file > environment > detection),
``detect`` (NVML, nvidia-smi, /proc through an injectable ``Sources`` value) and ``readings``
(the pure parsers of what detection reads).

May import ``text``, ``errors``, ``core`` and ``db``; never anything above.
"""
