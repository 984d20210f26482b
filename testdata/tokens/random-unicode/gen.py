#!/usr/bin/env python3
# Writes the 100 random strings 000.txt..099.txt here (seeded: rerunning gives
# the same files). Code points from many scripts and blocks, weighted toward
# ASCII, with Gemma 3's added tokens, literal U+2581 and whitespace runs mixed
# in; lone surrogates are never chosen (not encodable in UTF-8).
import os
import random

rnd = random.Random(20261130)
ranges = [
    (0x20, 0x7E, 30), (0x09, 0x0A, 3), (0xA0, 0x24F, 6), (0x300, 0x36F, 2), (0x370, 0x3FF, 2),
    (0x400, 0x4FF, 3), (0x590, 0x5FF, 1), (0x600, 0x6FF, 4), (0x900, 0x97F, 2), (0xE00, 0xE7F, 2),
    (0x1100, 0x11FF, 1), (0x2000, 0x206F, 2), (0x2190, 0x23FF, 1), (0x2500, 0x259F, 2), (0x2581, 0x2581, 3),
    (0x3000, 0x30FF, 3), (0x4E00, 0x9FFF, 6), (0xAC00, 0xD7A3, 3), (0xE000, 0xF8FF, 1), (0xFB00, 0xFFFD, 1),
    (0x10000, 0x1FFFF, 1), (0x1F300, 0x1FAFF, 4), (0x20000, 0x2FFFF, 1), (0xE0000, 0xE01EF, 1),
]
weights = [w for _, _, w in ranges]
words = ["<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>", "<unk>", "<mask>", "[multimodal]",
         "<unused7>", "<table>", "</td>", "<b>", "<0x0A>", "  ", "    ", "\n\n", "\t\t", "\u2581\u2581", "\r\n", "'s"]
here = os.path.dirname(os.path.abspath(__file__))
for i in range(100):
    n = rnd.choice([1, 2, 3, 5, 8, 13, 40, 100, 250])
    out = []
    for _ in range(n):
        if rnd.random() < 0.06:
            out.append(rnd.choice(words))
            continue
        lo, hi, _ = rnd.choices(ranges, weights)[0]
        out.append(chr(rnd.randint(lo, hi)))
    with open(os.path.join(here, "%03d.txt" % i), "w", encoding="utf-8", newline="") as f:
        f.write("".join(out))
