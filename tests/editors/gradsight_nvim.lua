-- Headless Neovim 0.7.2 (Debian) driving the gradsight language server.
-- Env: GS_PY (python with gradsight installed), GS_FILE (a .py file to open),
--      GS_LINE / GS_COL (0-based hover position). Prints DIAG / HOVER / ACTION lines; exits 1 on failure.
-- Neovim 0.7 has no vim.lsp.start (0.8+): use start_client + buf_attach_client.
local python, file = os.getenv("GS_PY") or "python3", os.getenv("GS_FILE")
local line, col = tonumber(os.getenv("GS_LINE") or "0"), tonumber(os.getenv("GS_COL") or "0")
local function log(s) io.stdout:write(s .. "\n") end
local function fail(s) log("FAIL: " .. s); vim.cmd("cquit 1") end

vim.cmd("edit " .. file)
local bufnr = vim.api.nvim_get_current_buf()
vim.bo[bufnr].filetype = "python"
local client_id = vim.lsp.start_client({
  name = "gradsight",
  cmd = { python, "-m", "gradsight", "lsp" },
  root_dir = vim.fn.fnamemodify(file, ":p:h"),
  init_options = { settings = { inlayHints = "all" } },
})
if not client_id then fail("start_client") end
vim.lsp.buf_attach_client(bufnr, client_id)

if not vim.wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50) then
  fail("no diagnostics")
end
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  local code = d.user_data and d.user_data.lsp and d.user_data.lsp.code or d.code
  log(string.format("DIAG %d:%d sev=%d src=%s code=%s msg=%s", d.lnum, d.col, d.severity, tostring(d.source),
    tostring(code), d.message))
end

local client = vim.lsp.get_client_by_id(client_id)
local uri = vim.uri_from_bufnr(bufnr)
local resp = client.request_sync("textDocument/hover",
  { textDocument = { uri = uri }, position = { line = line, character = col } }, 10000, bufnr)
if not resp or resp.err or not resp.result then fail("hover") end
log("HOVER " .. resp.result.contents.value:gsub("\n", " | "))

local diags = vim.lsp.diagnostic.get_line_diagnostics(bufnr, line)
local actions = client.request_sync("textDocument/codeAction", {
  textDocument = { uri = uri },
  range = { start = { line = line, character = col }, ["end"] = { line = line, character = col } },
  context = { diagnostics = diags },
}, 10000, bufnr)
if not actions or actions.err or not actions.result then fail("codeAction") end
for _, a in ipairs(actions.result) do log("ACTION " .. a.title) end

client.stop()
vim.wait(3000, function() return client.is_stopped() end, 50)
vim.cmd("qall!")
