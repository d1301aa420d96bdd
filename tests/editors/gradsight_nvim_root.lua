-- Headless Neovim (Debian 0.7.2) with the documented snippet (docs/editors.md, loaded first with
-- `luafile`): opens two Python files of one project and reloads one with `:e!`, then prints how many
-- gradsight clients and server processes there are. Env: GS_FILE_A, GS_FILE_B. Exits 1 on failure.
local function log(s) io.stdout:write(s .. "\n") end
local function fail(s) log("FAIL: " .. s); vim.cmd("cquit 1") end

local files = { os.getenv("GS_FILE_A"), os.getenv("GS_FILE_B") }
local buffers = {}
for _, file in ipairs(files) do
  vim.cmd("edit " .. file)
  buffers[#buffers + 1] = vim.api.nvim_get_current_buf()
end
vim.cmd("buffer " .. buffers[1])
vim.cmd("edit!")

for _, bufnr in ipairs(buffers) do
  if not vim.wait(30000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50) then
    fail("no diagnostics for buffer " .. bufnr)
  end
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    log(string.format("DIAG %s %d:%d %s", vim.api.nvim_buf_get_name(bufnr), d.lnum, d.col, d.message))
  end
end

local clients = {}
for _, client in ipairs(vim.lsp.get_active_clients()) do
  if client.name == "gradsight" then clients[#clients + 1] = client end
end
log("CLIENTS " .. #clients)
for _, client in ipairs(clients) do
  log("ROOT " .. tostring(client.config.root_dir))
  log("ATTACHED " .. #vim.tbl_keys(client.attached_buffers or {}))
end
-- Server processes started by this Neovim.
local children = vim.fn.systemlist({ "ps", "-o", "args=", "--ppid", tostring(vim.fn.getpid()) })
local servers = 0
for _, args in ipairs(children) do
  if args:find("gradsight") and args:find("lsp") then servers = servers + 1 end
end
log("SERVERS " .. servers)

-- A hover through the first buffer: markdown without raw links in Neovim.
local client = clients[1]
local resp = client.request_sync("textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(buffers[1]) },
  position = { line = tonumber(os.getenv("GS_LINE") or "0"), character = tonumber(os.getenv("GS_COL") or "0") },
}, 10000, buffers[1])
if resp and resp.result then log("HOVER " .. resp.result.contents.value:gsub("\n", " | ")) end

for _, c in ipairs(clients) do c.stop() end
vim.wait(3000, function() return #vim.lsp.get_active_clients() == 0 end, 50)
vim.cmd("qall!")
