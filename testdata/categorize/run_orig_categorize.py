# Runs the original categorize.py (which wants Python 3.13 only for the
# `allow_unnamed_section=False` keyword, i.e. the 3.11 default behaviour)
# under Python 3.11 by dropping that keyword. Used only to produce goldens.
import configparser, runpy, sys
_init = configparser.ConfigParser.__init__
def init(self, *a, allow_unnamed_section=False, **k):
    assert allow_unnamed_section is False
    _init(self, *a, **k)
configparser.ConfigParser.__init__ = init
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
