"""Pure building blocks every other folder uses.

It holds SM arithmetic (``archs``), versions, platforms, variant names, atomic files.

May import: text, errors. Nothing here knows the database, the target or the network.
"""
