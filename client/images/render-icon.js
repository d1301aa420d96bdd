// Renders client/images/icon.svg to client/images/icon.png (256x256, transparent corners) with the
// Chromium the end-to-end test uses: `node client/images/render-icon.js`. The PNG is committed; run
// this only after changing the SVG.
"use strict";

const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

(async () => {
  const svg = fs.readFileSync(path.join(__dirname, "icon.svg"), "utf8");
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu"] });
  const page = await browser.newPage({ viewport: { width: 256, height: 256 } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator("svg").screenshot({ path: path.join(__dirname, "icon.png"), omitBackground: true });
  await browser.close();
})();
