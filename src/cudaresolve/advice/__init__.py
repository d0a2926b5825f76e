"""The ways out shared by why-not, doctor and explain-error.

It holds the best variant for a driver, the releases with native code for a set of GPUs.

Pure. May import: text, errors, core, db, target, resolve.
"""
