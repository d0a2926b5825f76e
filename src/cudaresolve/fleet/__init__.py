"""Fleets: many hosts read from inventories, grouped into pools, and planned as few locks as run on them all.

``inputs`` reads host files, ``kubectl get nodes -o json`` (GPU Feature Discovery labels),
``scontrol show node --oneliner`` and CSV inventories into ``FleetHost`` values (pure parsers, one
bounded file reader); ``pools`` groups hosts by (GPU set, driver, platform, Python) and makes each
pool a ``Target``; ``plan`` solves each pool and the groups of pools with the solver ``lock``
uses, checks every group's set against every member pool, and finds the ways out for the pools
no set fits; ``placement`` writes the Kubernetes ``nodeAffinity`` and Slurm lines of a group.

May import ``text``, ``errors``, ``core``, ``db``, ``target``, ``resolve``, ``advice``, ``index``
and ``lock``.
"""
