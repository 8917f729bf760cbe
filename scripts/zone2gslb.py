#!/usr/bin/env python3
"""Convert a simple RFC 1035 master file into a gslb declarative config
(the TOML that `gslbctl apply -f` takes), so the same static zone can be
served by gslb-edge and by NSD or Knot in benchmarks and differential tests.

Handles what those zones use: $ORIGIN, $TTL, '@', relative and absolute
owners, an optional TTL and class per line, a parenthesised SOA, and the
types A, AAAA, CNAME, NS, MX, TXT, SRV, CAA, PTR, NAPTR, TLSA, SSHFP, DS, SVCB, HTTPS and
RFC 3597's generic TYPEnnn \\# form. Anything else is an error
naming the line.

With --dynamic every A and AAAA set becomes a pool-backed record instead:
one pool per set (no health check, so every member is up), one member per
address, weighted steering. That is the benchmark's "dynamic names" case.
--geo-region REGION or --geo-country CC adds one geo branch to each of
them (the same pool), so every answer looks its client up in the edge's
CIDR table or MaxMind files: the geo benchmark's cases.

Usage: zone2gslb.py [--dynamic [--geo-region R | --geo-country CC]] ZONEFILE > config.toml
"""
import json
import re
import sys
from collections import OrderedDict


def fail(lineno, msg):
    sys.exit(f"zone2gslb: line {lineno}: {msg}")


def absolute(name, origin):
    if name == "@":
        return origin
    if name.endswith("."):
        return name[:-1].lower()
    return f"{name}.{origin}".lower()


def logical_lines(text):
    """Join parenthesised continuations; strip comments outside quotes."""
    buf, start, depth = [], None, 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r';(?=(?:[^"]*"[^"]*")*[^"]*$).*', "", raw)
        if not line.strip() and depth == 0:
            continue
        if depth == 0:
            start = lineno
        depth += line.count("(") - line.count(")")
        buf.append(line.replace("(", " ").replace(")", " "))
        if depth == 0:
            yield start, " ".join(buf)
            buf = []


def main():
    args = sys.argv[1:]
    dynamic = "--dynamic" in args
    args = [a for a in args if a != "--dynamic"]
    branch = ""
    for flag, key in (("--geo-region", "regions"), ("--geo-country", "countries")):
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                sys.exit(f"zone2gslb: {flag} needs a value")
            branch = f"{key} = [{json.dumps(args[i + 1])}]"
            del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    path = args[0]
    text = open(path).read()
    origin, default_ttl, last_owner = None, 3600, None
    soa, ns, sets = None, [], OrderedDict()
    for lineno, line in logical_lines(text):
        if line.startswith("$ORIGIN"):
            origin = line.split()[1].rstrip(".").lower()
            continue
        if line.startswith("$TTL"):
            default_ttl = int(line.split()[1])
            continue
        tokens = re.findall(r'"[^"]*"|\S+', line)
        if line[0].isspace():
            owner = last_owner
        else:
            owner = absolute(tokens.pop(0), origin)
        last_owner = owner
        ttl = None
        while tokens and (tokens[0].isdigit() or tokens[0].upper() in ("IN", "CH")):
            t = tokens.pop(0)
            if t.isdigit():
                ttl = int(t)
        if not tokens:
            fail(lineno, "no record type")
        rtype, rdata = tokens[0].upper(), tokens[1:]
        if rtype == "SOA":
            mname, rname, _serial, refresh, retry, expire, minimum = rdata
            soa = dict(mname=absolute(mname, origin), rname=absolute(rname, origin),
                       refresh=int(refresh), retry=int(retry), expire=int(expire),
                       negativeTtl=int(minimum))
            continue
        if rtype == "NS" and owner == origin:
            ns.append(absolute(rdata[0], origin))
            continue
        if rtype == "A":
            data = {"a": rdata[0]}
        elif rtype == "AAAA":
            data = {"aaaa": rdata[0]}
        elif rtype == "CNAME":
            data = {"cname": absolute(rdata[0], origin)}
        elif rtype == "NS":
            data = {"ns": absolute(rdata[0], origin)}
        elif rtype == "MX":
            data = {"mx": {"preference": int(rdata[0]), "exchange": absolute(rdata[1], origin)}}
        elif rtype == "TXT":
            data = {"txt": [s.strip('"') for s in rdata]}
        elif rtype == "SRV":
            data = {"srv": {"priority": int(rdata[0]), "weight": int(rdata[1]),
                            "port": int(rdata[2]), "target": absolute(rdata[3], origin)}}
        elif rtype == "CAA":
            data = {"caa": {"flags": int(rdata[0]), "tag": rdata[1], "value": rdata[2].strip('"')}}
        elif rtype == "PTR":
            data = {"ptr": absolute(rdata[0], origin)}
        elif rtype == "NAPTR":
            naptr = {"order": int(rdata[0]), "preference": int(rdata[1]), "flags": rdata[2].strip('"'),
                     "services": rdata[3].strip('"'), "regexp": rdata[4].strip('"')}
            if rdata[5] != ".":
                naptr["replacement"] = absolute(rdata[5], origin)
            data = {"naptr": naptr}
        elif rtype == "TLSA":
            data = {"tlsa": {"usage": int(rdata[0]), "selector": int(rdata[1]),
                             "matchingType": int(rdata[2]), "data": "".join(rdata[3:])}}
        elif rtype == "SSHFP":
            data = {"sshfp": {"algorithm": int(rdata[0]), "fingerprintType": int(rdata[1]),
                              "fingerprint": "".join(rdata[2:])}}
        elif rtype == "DS":
            data = {"ds": {"keyTag": int(rdata[0]), "algorithm": int(rdata[1]),
                           "digestType": int(rdata[2]), "digest": "".join(rdata[3:])}}
        elif rtype in ("SVCB", "HTTPS"):
            binding = {"priority": int(rdata[0]), "params": " ".join(rdata[2:])}
            if rdata[1] != ".":
                binding["target"] = absolute(rdata[1], origin)
            data = {rtype.lower(): binding}
        elif re.fullmatch(r"TYPE\d+", rtype) and rdata[:1] == ["\\#"]:
            # RFC 3597: TYPEnnn \# LENGTH HEX
            data = {"generic": {"rtype": int(rtype[4:]), "data": "".join(rdata[2:])}}
        else:
            fail(lineno, f"type {rtype} is not supported")
        key = (owner, rtype)
        entry = sets.setdefault(key, {"ttl": ttl if ttl is not None else default_ttl, "data": []})
        entry["data"].append(data)
    if origin is None or soa is None:
        sys.exit("zone2gslb: the file needs $ORIGIN and an SOA")
    out = ["# generated by scripts/zone2gslb.py from " + path, "",
           "[[zone]]", f"apex = {json.dumps(origin)}", f"ns = {json.dumps(ns)}",
           f"defaultTtl = {default_ttl}", "[zone.soa]"]
    out += [f"{k} = {json.dumps(v)}" for k, v in soa.items()]
    for (owner, rtype), entry in sets.items():
        out += ["", "[[record]]", f"zone = {json.dumps(origin)}", f"name = {json.dumps(owner)}",
                f'type = "{rtype}"', f"ttl = {entry['ttl']}"]
        if dynamic and rtype in ("A", "AAAA"):
            pool = f"{owner}-{rtype.lower()}"
            geo = f", geo = [{{ {branch}, pools = [{json.dumps(pool)}] }}]" if branch else ""
            out.append(f'dynamic = {{ steering = "weighted", pools = [{json.dumps(pool)}]{geo} }}')
            out += ["", "[[pool]]", f"name = {json.dumps(pool)}"]
            for i, d in enumerate(entry["data"], 1):
                out += ["[[pool.member]]", f'name = "{pool}-{i}"',
                        f"address = {json.dumps(next(iter(d.values())))}", "port = 80"]
        else:
            out.append("static = [" + ", ".join(toml_inline(d) for d in entry["data"]) + "]")
    print("\n".join(out))


def toml_inline(value):
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_inline(v) for v in value) + "]"
    return json.dumps(value)


if __name__ == "__main__":
    main()
