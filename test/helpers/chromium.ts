/** Headless Chromium for the browser tests: Debian's `chromium` driven by playwright-core. The tests skip when it is absent. */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** Whether Chromium is installed; when it is not, says which test file is skipped and how to install it. */
export function chromiumInstalled(testName: string): boolean {
  const ok = fs.existsSync(CHROMIUM);
  if (!ok) console.warn(`[${testName}] skipped: ${CHROMIUM} is absent (apt-get install chromium)`);
  return ok;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
