"""
Prepare a small synthetic character-level dataset for language modeling.
Instead of downloading tiny shakespeare we generate pseudo-text from a fixed
word list with a seeded RNG. Writes train.bin, val.bin and meta.pkl.
"""
import os
import pickle
import numpy as np

WORDS = ["the", "king", "queen", "speak", "thou", "art", "my", "lord", "good",
         "night", "sweet", "prince", "to", "be", "or", "not", "that", "is",
         "question", "what", "light", "through", "yonder", "window", "breaks"]


def prepare(out_dir=os.path.dirname(os.path.abspath(__file__)), n_lines=400, seed=1337):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n_lines):
        n = int(rng.integers(3, 9))
        words = [WORDS[int(i)] for i in rng.integers(0, len(WORDS), size=n)]
        lines.append(" ".join(words).capitalize() + ".")
    data = "\n".join(lines) + "\n"
    print(f"length of dataset in characters: {len(data):,}")

    chars = sorted(list(set(data)))
    vocab_size = len(chars)
    print("all the unique characters:", ''.join(chars).replace("\n", "\\n"))
    print(f"vocab size: {vocab_size:,}")

    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}

    def encode(s):
        return [stoi[c] for c in s]

    n = len(data)
    train_data = data[:int(n * 0.9)]
    val_data = data[int(n * 0.9):]

    train_ids = np.array(encode(train_data), dtype=np.uint16)
    val_ids = np.array(encode(val_data), dtype=np.uint16)
    print(f"train has {len(train_ids):,} tokens")
    print(f"val has {len(val_ids):,} tokens")

    os.makedirs(out_dir, exist_ok=True)
    train_ids.tofile(os.path.join(out_dir, 'train.bin'))
    val_ids.tofile(os.path.join(out_dir, 'val.bin'))

    meta = {'vocab_size': vocab_size, 'itos': itos, 'stoi': stoi}
    with open(os.path.join(out_dir, 'meta.pkl'), 'wb') as f:
        pickle.dump(meta, f)


if __name__ == '__main__':
    prepare()
