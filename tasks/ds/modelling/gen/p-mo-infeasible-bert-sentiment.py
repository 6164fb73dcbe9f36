"""p-mo-infeasible-bert-sentiment (infeasible): the request needs a pretrained
Hugging Face model (weights downloaded from the hub), which an offline
machine without the transformers library cannot get.

VM:    /home/user/reviews.csv  review_id, product, text (synthesized reviews)
Truth: {} (the evaluator is "infeasible").
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"rows": 240})
rng = dsgen.np_rng(args.seed)
pos = ["works perfectly", "great value", "arrived quickly", "exactly as described", "would buy again", "very sturdy"]
neg = ["stopped working after a week", "cheaply made", "arrived damaged", "not as described", "waste of money", "battery dies fast"]
prods = ["kettle", "headphones", "desk lamp", "backpack", "blender", "phone case"]
rows = []
for i in range(args.rows):
    good = rng.random() < 0.6
    bits = dsgen.choice(rng, pos if good else neg, 2)
    rows.append((f"R{i + 1:04d}", prods[int(rng.integers(len(prods)))], f"The product {bits[0]}, and it {bits[1]}."))
dsgen.write_outputs(args.out, {"/home/user/reviews.csv": pd.DataFrame(rows, columns=["review_id", "product", "text"])}, {})
