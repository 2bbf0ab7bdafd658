# gguf-cut.py SRC DST LAYERS: a GGUF model file with only its first LAYERS
# blocks (block_count set to match; every other key and tensor as it is),
# for a machine that cannot take the whole file (scripts/gpu-prep.sh).
# Needs gguf-py (PyPI: gguf).
import os
import sys

import gguf

src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = gguf.GGUFReader(src)
arch = r.fields["general.architecture"].contents()
w = gguf.GGUFWriter(dst + ".tmp", arch)
for f in r.fields.values():
    if f.name.startswith("GGUF.") or f.name == "general.architecture":
        continue
    v = keep if f.name == arch + ".block_count" else f.contents()
    t = f.types[0]
    w.add_key_value(f.name, v, t,
                    sub_type=f.types[-1] if t == gguf.GGUFValueType.ARRAY else None)
for t in r.tensors:
    if t.name.startswith("blk.") and int(t.name.split(".")[1]) >= keep:
        continue
    w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
os.replace(dst + ".tmp", dst)
