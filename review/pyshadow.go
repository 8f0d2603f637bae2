package review

import (
	"path"
	"strings"
)

// pyShadowing reports whether the workspace path p is a module that can
// run in place of pytest's own or of the standard library's: python -m
// pytest puts the workspace first on sys.path (so does pytest.ini's
// pythonpath = .), before the standard library and site-packages, so a
// top-level pytest.py, _pytest/ package or json.py is imported instead of
// the real one, and can print any summary and exit 0: its source, its
// sourceless bytecode (pytest.pyc) or an extension module. Only the
// workspace's top level: a module inside a package is imported by its
// package's name. The standard library's test package is left out: a
// project's tests often live in test/, and pytest imports no test module.
func pyShadowing(p string) bool {
	top, rest, sub := strings.Cut(p, "/")
	file := top
	if sub {
		file = rest
	}
	if !strings.HasSuffix(file, ".py") && !strings.HasSuffix(file, ".pyc") && !strings.HasSuffix(file, ".so") {
		return false
	}
	if !sub {
		top, _, _ = strings.Cut(top, ".") // re.py, re.pyc, re.cpython-312-x86_64-linux-gnu.so
	}
	_, ok := pyShadowNames[top]
	return ok
}

// pyShadowed are the paths among changed (changedPaths) that take the
// place of pytest's or the standard library's module from below the
// workspace's top: pytest puts the directory of a test module (or
// conftest.py) that is in no package first on sys.path, so a
// tests/fractions.py runs when a test imports fractions. A directory
// with an __init__.py is a package, whose modules go by its name.
func (w *Workspace) pyShadowed(changed []string) []string {
	var shadowing []string
	for _, p := range changed {
		if vendored(p) || cached(p) {
			continue
		}
		parts := strings.Split(p, "/")
		for i := 1; i < len(parts); i++ {
			name := parts[i]
			if i == len(parts)-1 {
				if !strings.HasSuffix(name, ".py") && !strings.HasSuffix(name, ".pyc") && !strings.HasSuffix(name, ".so") {
					break
				}
				name, _, _ = strings.Cut(name, ".")
			}
			if _, ok := pyShadowNames[name]; ok && !w.pyPackage(strings.Join(parts[:i], "/")) {
				shadowing = append(shadowing, p)
				break
			}
		}
	}
	return shadowing
}

// pyPackage reports whether the workspace directory d is a Python
// package: its __init__ is there, source or bytecode.
func (w *Workspace) pyPackage(d string) bool {
	for _, init := range []string{"__init__.py", "__init__.pyc"} {
		if _, err := w.root.Lstat(path.Join(d, init)); err == nil {
			return true
		}
	}
	return false
}

// pyShadowed is Workspace.pyShadowed of the review's workspace; nil
// outside one.
func (t *Trace) pyShadowed(changed []string) []string {
	t.mu.Lock()
	ws := t.ws
	t.mu.Unlock()
	if ws == nil {
		return nil
	}
	return ws.pyShadowed(changed)
}

// pyShadowNames are pytest's modules, its dependencies', and the standard
// library's (sys.stdlib_module_names of Python 3.11 and 3.12, but test).
var pyShadowNames = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, n := range strings.Fields(pytestModules + " " + stdlibModules) {
		m[n] = struct{}{}
	}
	return m
}()

const pytestModules = "pytest _pytest pluggy iniconfig packaging py exceptiongroup tomli colorama"

const stdlibModules = `
__future__ _abc _aix_support _ast _asyncio _bisect _blake2 _bootsubprocess _bz2 _codecs _codecs_cn _codecs_hk
_codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections _collections_abc _compat_pickle _compression
_contextvars _crypt _csv _ctypes _curses _curses_panel _datetime _dbm _decimal _elementtree _frozen_importlib
_frozen_importlib_external _functools _gdbm _hashlib _heapq _imp _io _json _locale _lsprof _lzma _markupbase
_md5 _msi _multibytecodec _multiprocessing _opcode _operator _osx_support _overlapped _pickle _posixshmem
_posixsubprocess _py_abc _pydecimal _pyio _queue _random _scproxy _sha1 _sha256 _sha3 _sha512 _signal
_sitebuiltins _socket _sqlite3 _sre _ssl _stat _statistics _string _strptime _struct _symtable _thread
_threading_local _tkinter _tokenize _tracemalloc _typing _uuid _warnings _weakref _weakrefset _winapi
_zoneinfo abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii
bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys
compileall concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes curses dataclasses
datetime dbm decimal difflib dis distutils doctest email encodings ensurepip enum errno faulthandler fcntl
filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib grp
gzip hashlib heapq hmac html http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json
keyword lib2to3 linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib
msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os ossaudiodev
pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats
pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource
rlcompleter runpy sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket
socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct
subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap this
threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types
typing unicodedata unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref
xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo
`
