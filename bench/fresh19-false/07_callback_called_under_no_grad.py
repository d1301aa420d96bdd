"""fresh19 (false): GS201 philipperemy/n-beats `examples/trainer_pytorch.py:133`.

    def plot_model(x, target, grad_step):              # a closure in main()
        if not args.disable_plot:
            plot(net, x, target, backcast_length, forecast_length, grad_step)
    simple_fit(net, optimiser, data_gen, plot_model, device, max_grad_steps)

    def simple_fit(net, optimiser, data_generator, on_save_callback=None, ...):
        for grad_step, (x, target) in enumerate(data_generator):
            ... loss.backward(); optimiser.step()
            if grad_step % 1000 == 0 or ...:
                with torch.no_grad():
                    save(net, optimiser, grad_step)
                    if on_save_callback is not None:
                        on_save_callback(x, target, grad_step)

    def plot(net, x, target, backcast_length, forecast_length, grad_step):
        net.eval()
        _, f = net(torch.tensor(x, dtype=torch.float))
        for i in range(4):
            ff, xx, yy = f.cpu().numpy()[i], x[i], target[i]     # line 133

`plot` has one caller, `plot_model`, which runs only as `simple_fit`'s `on_save_callback`, inside
`with torch.no_grad()`: `f` does not require grad and `.numpy()` works. Runs cleanly.
"""
import numpy as np
import torch
import torch.nn as nn


def main():
    net = nn.Linear(8, 4)
    optimiser = torch.optim.Adam(net.parameters())

    def plot_model(x, target, grad_step):
        plot(net, x, target, grad_step)

    data = [(np.random.randn(4, 8), np.random.randn(4, 4)) for _ in range(3)]
    simple_fit(net, optimiser, data, plot_model)


def simple_fit(net, optimiser, data_generator, on_save_callback=None):
    for grad_step, (x, target) in enumerate(data_generator):
        optimiser.zero_grad()
        net.train()
        forecast = net(torch.tensor(x, dtype=torch.float))
        loss = nn.functional.mse_loss(forecast, torch.tensor(target, dtype=torch.float))
        loss.backward()
        optimiser.step()
        with torch.no_grad():
            if on_save_callback is not None:
                on_save_callback(x, target, grad_step)


def plot(net, x, target, grad_step):
    net.eval()
    f = net(torch.tensor(x, dtype=torch.float))
    for i in range(4):
        ff, xx, yy = f.cpu().numpy()[i], x[i], target[i]
    print("plotted step", grad_step, ff.shape)


main()
