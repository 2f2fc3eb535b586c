#!/usr/bin/env python3
"""Golden-file helper (not used by the tests): rewrites a summary tarball into
the form on which the ORIGINAL summary.py computes what our `summary`
computes on the raw tarball, i.e. with the quirks of docs/compatibility.md#summary fixed on
the input side:

* #1 `=== Kernel Submission Summary ===` blocks are removed;
* #2 a CCL block repeated with the same banner is dropped;
* #4/#6/#7 in Device Timing L0 tables, names lose a `Tile #n: ` prefix and a
  `-v` shape suffix, unquoted names with commas are quoted, and rows with the
  same name are merged (time and calls summed).

usage: normalize.py IN.tgz OUT.tgz
"""
import io, re, sys, tarfile

SHAPE = re.compile(r'\[(SIMD[^\]]*|\d+)\]$')
TILE = re.compile(r'^Tile #\d+:\s*')

def norm_name(raw):
    name = TILE.sub('', raw.strip())
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        name = name[1:-1]
    return SHAPE.sub('', name)

def fix_member(text):
    lines = text.split('\n')
    out, i, section, seen_banners = [], 0, None, set()
    while i < len(lines):
        line = lines[i]
        if 'Kernel Submission Summary' in line:
            i += 1
            while i < len(lines) and not lines[i].startswith('***') and not lines[i].startswith('==='):
                i += 1
            continue
        if line.startswith('*' * 28):
            banner = lines[i + 1] if i + 1 < len(lines) else ''
            j = i + 3
            while j < len(lines) and lines[j].strip() and not lines[j].startswith('*'):
                j += 1
            if banner in seen_banners:
                i = j
                continue
            seen_banners.add(banner)
            out.extend(lines[i:j])
            i = j
            continue
        if 'Device Timing Summary' in line:
            section = 'device'
        elif 'API Timing Summary' in line:
            section = 'host'
        if 'L0 Backend' in line and section == 'device':
            out.append(line)
            i += 1
            while i < len(lines) and not lines[i].strip():
                out.append(lines[i]); i += 1
            header = lines[i]; out.append(header); i += 1
            ncols = len(header.split(','))
            merged, order = {}, []
            while i < len(lines) and lines[i].strip():
                parts = lines[i].rsplit(',', ncols - 1)
                name = norm_name(parts[0])
                calls, time = int(parts[1]), int(parts[2])
                if name not in merged:
                    merged[name] = [0, 0]; order.append(name)
                merged[name][0] += calls; merged[name][1] += time
                i += 1
            for name in order:
                c, t = merged[name]
                out.append('"%s", %d, %d' % (name, c, t) + ''.join(', 0' for _ in range(ncols - 3)))
            continue
        out.append(line)
        i += 1
    return '\n'.join(out)

def main(src, dst):
    with tarfile.open(src) as tin, tarfile.open(dst, 'w:gz') as tout:
        for m in tin:
            f = tin.extractfile(m)
            if f is None:
                tout.addfile(m); continue
            data = f.read()
            try:
                data = fix_member(data.decode()).encode()
            except UnicodeDecodeError:
                pass
            m.size = len(data)
            tout.addfile(m, io.BytesIO(data))

if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
