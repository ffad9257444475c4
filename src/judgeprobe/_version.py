"""The version of judgeprobe, in a module of its own so that any module can import it.

``judgeprobe/__init__.py`` imports most of the package to export its public names; a module
that imported the version from there would depend on the whole package being imported first.
"""

__version__ = "0.1.0"
