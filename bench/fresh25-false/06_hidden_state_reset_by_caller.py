"""fresh25 false: kaushalshetty/Structured-Self-Attention attention/model.py:102 (GS413, "`self.hidden_state` keeps
this call's graph for the next `forward`, so the next step's backward raises").

`StructuredSelfAttention.forward` runs `outputs, self.hidden_state = self.lstm(embeddings.view(...),
self.hidden_state)`: the LSTM's final state (graph alive) is stored on the module and fed to the next call. But
every caller re-initialises it first: attention/train.py's `train` loop runs `attention_model.hidden_state =
attention_model.init_hidden()` (fresh zeros, no graph) before each `attention_model(x)` of each batch, and
`evaluate` and `get_activation_wts` (the other two callers, in the same file) do the same. So no forward ever reads
an earlier step's graph, and every backward is the first through its graph. Run below with the same statements
(the model and the training loop, smaller sizes, random batches): 2 epochs of 4 batches train without error. (Only
a forward without the reset, which no file of the repository does, would then raise.)
"""
import torch
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)


class StructuredSelfAttention(torch.nn.Module):
    def __init__(self, batch_size, lstm_hid_dim, d_a, r, max_len, emb_dim=8, vocab_size=50, type=0, n_classes=1):
        super().__init__()
        self.embeddings = torch.nn.Embedding(vocab_size, emb_dim, padding_idx=0)
        self.lstm = torch.nn.LSTM(emb_dim, lstm_hid_dim, 1, batch_first=True)
        self.linear_first = torch.nn.Linear(lstm_hid_dim, d_a)
        self.linear_second = torch.nn.Linear(d_a, r)
        self.n_classes = n_classes
        self.linear_final = torch.nn.Linear(lstm_hid_dim, self.n_classes)
        self.batch_size = batch_size
        self.max_len = max_len
        self.lstm_hid_dim = lstm_hid_dim
        self.hidden_state = self.init_hidden()
        self.r = r
        self.type = type

    def softmax(self, input, axis=1):
        input_size = input.size()
        trans_input = input.transpose(axis, len(input_size) - 1)
        trans_size = trans_input.size()
        input_2d = trans_input.contiguous().view(-1, trans_size[-1])
        soft_max_2d = F.softmax(input_2d, dim=1)
        soft_max_nd = soft_max_2d.view(*trans_size)
        return soft_max_nd.transpose(axis, len(input_size) - 1)

    def init_hidden(self):
        return (Variable(torch.zeros(1, self.batch_size, self.lstm_hid_dim)),
                Variable(torch.zeros(1, self.batch_size, self.lstm_hid_dim)))

    def forward(self, x):
        embeddings = self.embeddings(x)
        outputs, self.hidden_state = self.lstm(embeddings.view(self.batch_size, self.max_len, -1),
                                               self.hidden_state)          # model.py:102
        x = torch.tanh(self.linear_first(outputs))
        x = self.linear_second(x)
        x = self.softmax(x, 1)
        attention = x.transpose(1, 2)
        sentence_embeddings = attention @ outputs
        avg_sentence_embeddings = torch.sum(sentence_embeddings, 1) / self.r
        return torch.sigmoid(self.linear_final(avg_sentence_embeddings)), attention


def train(attention_model, batches, criterion, optimizer, epochs=2):                 # attention/train.py
    for i in range(epochs):
        for batch_idx, train in enumerate(batches):
            attention_model.hidden_state = attention_model.init_hidden()              # train.py:33
            x, y = Variable(train[0]), Variable(train[1])
            y_pred, att = attention_model(x)
            loss = criterion(y_pred.type(torch.DoubleTensor).squeeze(1), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()


model = StructuredSelfAttention(batch_size=4, lstm_hid_dim=6, d_a=5, r=2, max_len=7)
optimizer = torch.optim.RMSprop(model.parameters())
batches = [(torch.randint(1, 50, (4, 7)), torch.randint(0, 2, (4,)).double()) for _ in range(4)]
print("2 epochs x 4 batches trained, last loss:", train(model, batches, torch.nn.BCELoss(), optimizer))
