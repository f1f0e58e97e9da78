from __future__ import print_function
import argparse
import json
import os
import subprocess
import sys

import torch
import torch.nn as nn
import torch.optim as optim
import numpy as np


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double).cuda()
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double).cuda()
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double).cuda()
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double).cuda()

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=3, help='steps to run')
    opt = parser.parse_args()
    if not os.path.exists('traindata.pt'):
        subprocess.check_call([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'generate_sine_wave.py')])
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    data = torch.load('traindata.pt', weights_only=False)  # a float64 numpy array
    input = torch.from_numpy(data[3:, :-1]).cuda()
    target = torch.from_numpy(data[3:, 1:]).cuda()
    test_input = torch.from_numpy(data[:3, :-1]).cuda()
    test_target = torch.from_numpy(data[:3, 1:]).cuda()
    # build the model
    seq = Sequence()
    seq.double()
    seq.cuda()
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=6)
    # begin to train
    losses = []
    for i in range(opt.steps):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = 50
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            losses.append(loss.item())
            y = pred.detach().cpu().numpy()
        # save the prediction instead of drawing it
        np.save('predict%d.npy' % i, y)
    print("RESULT " + json.dumps({"test_loss": [round(l, 8) for l in losses],
                                  "future": [round(float(v), 6) for v in y[0, -5:]]}))
