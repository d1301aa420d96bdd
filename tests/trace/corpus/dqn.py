# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/405_DQN_Reinforcement_learning.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
BATCH_SIZE = 16
GAMMA = 0.9
TARGET_REPLACE_ITER = 3
MEMORY_CAPACITY = 64
N_ACTIONS = 2
N_STATES = 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(N_STATES, 16)
        self.out = nn.Linear(16, N_ACTIONS)

    def forward(self, x):
        return self.out(F.relu(self.fc1(x)))


class DQN:
    def __init__(self):
        self.eval_net, self.target_net = Net(), Net()
        self.learn_step_counter = 0
        self.memory = torch.randn(MEMORY_CAPACITY, N_STATES * 2 + 2)
        self.optimizer = torch.optim.Adam(self.eval_net.parameters(), lr=0.01)
        self.loss_func = nn.MSELoss()

    def learn(self):
        if self.learn_step_counter % TARGET_REPLACE_ITER == 0:
            self.target_net.load_state_dict(self.eval_net.state_dict())
        self.learn_step_counter += 1
        idx = torch.randint(0, MEMORY_CAPACITY, (BATCH_SIZE,))
        b_memory = self.memory[idx]
        b_s = b_memory[:, :N_STATES]
        b_a = b_memory[:, N_STATES:N_STATES + 1].abs().long() % N_ACTIONS
        b_r = b_memory[:, N_STATES + 1:N_STATES + 2]
        b_s_ = b_memory[:, -N_STATES:]
        q_eval = self.eval_net(b_s).gather(1, b_a)
        q_next = self.target_net(b_s_).detach()
        q_target = b_r + GAMMA * q_next.max(1)[0].view(BATCH_SIZE, 1)
        loss = self.loss_func(q_eval, q_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


dqn = DQN()
for episode in range(5):
    print("episode", episode, "loss %.3f" % dqn.learn())
