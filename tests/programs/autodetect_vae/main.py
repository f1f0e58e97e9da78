from __future__ import print_function
import argparse
import json
import os

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

parser = argparse.ArgumentParser(description='VAE on synthetic 8x8 digits')
parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                    help='input batch size for training (default: 64)')
parser.add_argument('--epochs', type=int, default=3, metavar='N',
                    help='number of epochs to train (default: 3)')
parser.add_argument('--no-cuda', action='store_true', default=False,
                    help='disables CUDA training')
parser.add_argument('--no-mps', action='store_true', default=False,
                    help='disables macOS GPU training')
parser.add_argument('--seed', type=int, default=1, metavar='S',
                    help='random seed (default: 1)')
parser.add_argument('--log-interval', type=int, default=5, metavar='N',
                    help='how many batches to wait before logging training status')
parser.add_argument('--save-dir', type=str, default='results',
                    help='where reconstructions are written')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
use_mps = not args.no_mps and torch.backends.mps.is_available()

torch.manual_seed(args.seed)

if args.cuda:
    device = torch.device("cuda")
elif use_mps:
    device = torch.device("mps")
else:
    device = torch.device("cpu")

kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}


def synthetic_digits(n, seed):
    """blurry 8x8 'digits': each class is a random stroke pattern, pixels in [0, 1]"""
    rng = np.random.default_rng(seed)
    protos = (np.random.default_rng(0).random((10, 8, 8)) > 0.6).astype(np.float32)
    labels = rng.integers(0, 10, n)
    imgs = protos[labels] * 0.9 + 0.1 * rng.random((n, 8, 8)).astype(np.float32)
    return torch.from_numpy(imgs).unsqueeze(1), torch.from_numpy(labels)


train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(*synthetic_digits(768, seed=1)),
    batch_size=args.batch_size, shuffle=True, **kwargs)
test_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(*synthetic_digits(256, seed=2)),
    batch_size=args.batch_size, shuffle=False, **kwargs)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(64, 48)
        self.fc21 = nn.Linear(48, 8)
        self.fc22 = nn.Linear(48, 8)
        self.fc3 = nn.Linear(8, 48)
        self.fc4 = nn.Linear(48, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=3e-3)


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))

    avg = train_loss / len(train_loader.dataset)
    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, avg))
    return avg


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n], recon_batch.view(args.batch_size, 1, 8, 8)[:n]])
                np.save(os.path.join(args.save_dir, 'reconstruction_' + str(epoch) + '.npy'), comparison.cpu().numpy())

    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.4f}'.format(test_loss))
    return test_loss


if __name__ == "__main__":
    os.makedirs(args.save_dir, exist_ok=True)
    train_losses, test_losses = [], []
    for epoch in range(1, args.epochs + 1):
        train_losses.append(round(train(epoch), 5))
        test_losses.append(round(test(epoch), 5))
        with torch.no_grad():
            sample = torch.randn(16, 8).to(device)
            sample = model.decode(sample).cpu()
            np.save(os.path.join(args.save_dir, 'sample_' + str(epoch) + '.npy'), sample.view(16, 1, 8, 8).numpy())
    print("RESULT " + json.dumps({"train_loss": train_losses, "test_loss": test_losses,
                                  "sample_mean": round(sample.mean().item(), 6)}))
