"""GPU code inside binaries: which SASS, PTX and LTO targets ``.so`` files, wheels and ``.pt2`` packages carry,
and whether extension modules find the torch symbols and CUDA libraries they need.

Modules, lowest first (each imports only those before it):

* ``elf``: the bounded reader and the ELF header and section table (pure);
* ``dynamic``: DT_NEEDED, RUNPATH, dynamic symbols and their GNU versions (pure);
* ``demangle``: a small, bounded Itanium C++ demangler (pure);
* ``pe``: a Windows module's (``.pyd``, ``.dll``) section table (pure);
* ``abi``: an extension's needs against torch's exports and the CUDA libraries beside it (pure);
* ``fatbin``: fatbin containers and entries, cubins, ``read_fatbin_archs`` (pure);
* ``staticlib``: a static library's member objects, and ``read_code`` for any binary (pure);
* ``report``: the values found (``BinaryReport``, ``FileError``, ``AotiPackage``) (pure);
* ``aoti_check``: an AOTInductor package against a target's GPUs (pure);
* ``archive``: one zip member as a seekable stream (reads an open archive);
* ``scan``: one binary file or one wheel (I/O);
* ``aoti``: one ``.pt2`` package, its kernels read through ``scan`` (I/O);
* ``inspect``: each path or distribution name the user gives, sent to ``scan`` or ``aoti`` (I/O);
* ``linkage``: the ABI check of an environment's or the named wheels' extension modules (I/O).

May import ``core``, ``text`` and ``errors`` only.
"""
