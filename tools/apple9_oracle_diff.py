#!/usr/bin/env python3
"""Differential check of the Apple9 decoder against the M3 reference disassembler
(TellowKrinkle/applegpu branch M3, run as `python3 disassemble.py FILE`; not part of
this repository): random streams of mutated tk-single words and random words, each
listed by both; every reference line at an address we frame with the same bytes
must be identical, or one the reference could not decode (`<disassembly failed>`).

usage: apple9_oracle_diff.py TK_M3_CHECKOUT METAL_PROFILE SHARED_DIR [N]
"""
import random, subprocess, re, os, json, sys, tempfile
random.seed(0xA9D1)
tk, bin_, shared = sys.argv[1:4]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 400
cases=[json.loads(l) for l in open(os.path.join(shared, 'corpus/apple9/tk-single/encodings.jsonl'))]
ok=[c for c in cases if c['status']=='ok']
tmp = os.path.join(tempfile.mkdtemp(), 'x.bin')
def parse(t):
    m={}
    for line in t.splitlines():
        mm=re.match(r'^\s*([0-9a-f]+): (.{42}) (.*)$',line)
        if mm: m[int(mm.group(1),16)]=(mm.group(2).rstrip(),mm.group(3))
    return m
tot=dict(ref=0,alike=0,ident=0,reffail=0,diff=0,raised=0)
shown=0
for i in range(n):
    # random mix: corpus words mutated by a few random bit flips, plus random words
    parts=[]
    for _ in range(random.randint(5,60)):
        r=random.random()
        if r<0.6:
            b=bytearray(bytes.fromhex(random.choice(ok)['hex']))
            for _ in range(random.randint(0,3)):
                k=random.randrange(len(b)*8); b[k//8]^=1<<(k%8)
            parts.append(bytes(b))
        else:
            parts.append(bytes(random.randrange(256) for _ in range(random.choice([2,4,6,8]))))
    code=b''.join(parts)+bytes.fromhex('0e000000')
    open(tmp,'wb').write(code)
    ref=subprocess.run(['python3',os.path.join(tk, 'disassemble.py'),tmp],capture_output=True,text=True)
    ours=subprocess.run([bin_,'--binary',tmp,'--gpu','g16g','--disasm-only','--allow-unknown'],capture_output=True,text=True)
    assert ours.returncode==0 and 'panick' not in ours.stderr, ours.stderr
    if ref.returncode: tot['raised']+=1
    e,o=parse(ref.stdout),parse(ours.stdout)
    for a,(b,asm) in e.items():
        tot['ref']+=1
        if a in o and o[a][0]==b:
            tot['alike']+=1
            if o[a][1]==asm: tot['ident']+=1
            elif asm=='<disassembly failed>': tot['reffail']+=1
            else:
                tot['diff']+=1
                if shown<8: shown+=1; print(hex(a),b,'\n ref:',asm,'\n our:',o[a][1])
print(tot)
sys.exit(1 if tot['diff'] else 0)
