"""GPU binaries on disk: the ELF and fatbin readers, wheels and directories, AOTInductor ``.pt2``
packages.

May import: text, errors, core (it sits below the database: a binary's code list needs no facts).
"""
