import torch
from torch.utils.data import Dataset


class MyTrainDataset(Dataset):
    def __init__(self, size, seed=0):
        self.size = size
        g = torch.Generator().manual_seed(seed)
        w = torch.randn(20, 4, generator=g)
        self.data = []
        for _ in range(size):
            x = torch.rand(20, generator=g)
            y = torch.argmax(x @ w).long()
            self.data.append((x, y))

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]
