/**
 * The "Done means", end to end in a real browser: an agent's MCP tool call needs 2 of 3
 * approvers; two approvers log in to the console in Debian's chromium (driven by Playwright,
 * never a downloaded browser) and approve; the agent's retry then executes once (one write at the
 * sandbox); the timeline shows it. Screenshots of the inbox, proposal and timeline pages are
 * kept in `e2e/artifacts/` (gitignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { type Browser, chromium, type Page } from '@playwright/test';
import { createDevelopmentKeyRing } from 'sideguard';
import { type ServedGateway, serveGateway } from 'sideguard/gateway';
import { mcpServeExtension } from 'sideguard/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApproverSecret } from '../src/approvals/approver-secret.js';
import { sandboxWrites } from '../test/gateway/gateway-helpers.js';
import { connectModern, structured } from '../test/gateway/mcp/mcp-test-kit.js';
import { startTestSandbox, tempDir } from '../test/sandbox/sandbox-helpers.js';

const CONFIG = fileURLToPath(new URL('./fixtures/approvals.config.ts', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const CHROMIUM = process.env.SIDEGUARD_CHROMIUM ?? '/usr/bin/chromium';
const AGENT_KEY = 'sk_agent_e2e_support_0123456789';
const TOOL = 'support.refund.v1';
const secretOf = (id: string) => `${id}-console-secret`;

const chromiumMissing = !existsSync(CHROMIUM) && process.env.SIDEGUARD_REQUIRE_CHROMIUM !== '1';
if (chromiumMissing) {
  console.log(
    `Browser end-to-end test skipped: ${CHROMIUM} is missing (apt-get install chromium, or set SIDEGUARD_CHROMIUM); .ci/run installs it and requires it.`,
  );
}

describe.skipIf(chromiumMissing)('approvals in a real browser', () => {
  let sandbox: Awaited<ReturnType<typeof startTestSandbox>>;
  let served: ServedGateway;
  let agent: Client;
  let browser: Browser;
  let cleanupDir: () => Promise<void>;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sandbox = await startTestSandbox();
    const { dir, cleanup } = await tempDir('sideguard-e2e-');
    cleanupDir = cleanup;
    const approvers = await Promise.all(
      ['finance-a', 'finance-b', 'finance-c', 'ops-oncall'].map(async (id) => ({
        id,
        secretHash: await hashApproverSecret(secretOf(id)),
      })),
    );
    const saved = { ...process.env };
    Object.assign(process.env, {
      SG_E2E_SANDBOX_URL: sandbox.dataUrl,
      SG_E2E_STORE: join(dir, 'gateway.db'),
      SG_E2E_APPROVERS: JSON.stringify(approvers),
    });
    try {
      served = await serveGateway({
        configFile: CONFIG,
        port: 0,
        consolePort: 0,
        keyRing: createDevelopmentKeyRing('e2e-tests'),
        extensions: [mcpServeExtension({ configFile: CONFIG, upstreamStderr: 'ignore' })],
      });
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
    agent = await connectModern(new URL(`${served.url}/mcp`), AGENT_KEY);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    await served?.close();
    await sandbox?.stop();
    await cleanupDir?.();
  });

  async function logIn(id: string, viewport = { width: 1100, height: 900 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    await page.goto(`${served.console?.url}/`);
    await expect(page.url()).toContain('/login');
    await page.getByLabel('Approver id').fill(id);
    await page.getByLabel('Secret').fill(secretOf(id));
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/$/);
    return page;
  }

  it('an MCP call needing 2 of 3 executes once after two approvers approve in the console', async () => {
    expect(served.console?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const refundWrites = async () => (await sandboxWrites(sandbox))['payments.create_refund'] ?? 0;
    const arguments_ = { charge: 'ch_sg_003', amount: '1500', note: 'damaged <b>box</b>' };

    // finance-b watches the inbox before anything is proposed: it fills in live.
    // (on a phone-sized screen, deciding with the keyboard only)
    const second = await logIn('finance-b', { width: 390, height: 844 });
    await expect(second.locator('#inbox-rows').textContent()).resolves.toContain('Nothing waits');

    const first = await agent.callTool({ name: TOOL, arguments: arguments_ });
    const pending = structured(first);
    expect(pending).toMatchObject({ code: 'approval_required' });
    const proposal = pending.proposal as string;
    expect(proposal).toBeTruthy();

    const approver = await logIn('finance-a');
    const row = approver.locator(`tr[data-proposal="${proposal}"]`);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('Refund 15.00 on ch_sg_003');
    await approver.screenshot({ path: join(ARTIFACTS, 'inbox.png'), fullPage: true });
    await row.getByRole('link').first().click();
    await approver.waitForURL(/\/proposals\//);
    await expect(approver.locator('h1').textContent()).resolves.toBe('Refund 15.00 on ch_sg_003');
    await expect(approver.locator('#tally').textContent()).resolves.toBe('0 of 2');
    await expect(approver.locator('main').textContent()).resolves.toContain('over_auto_limit');
    await approver.screenshot({ path: join(ARTIFACTS, 'proposal.png'), fullPage: true });
    await approver.getByLabel('Reason (optional)').fill('Customer sent photos');
    await approver.getByRole('button', { name: 'Approve' }).click();
    await approver.waitForURL(/done=approve/);
    await expect(approver.locator('#tally').textContent()).resolves.toBe('1 of 2');

    // One approval of two: the agent's retry is still pending and nothing was written.
    const retry = await agent.callTool({ name: TOOL, arguments: arguments_ });
    expect(structured(retry)).toMatchObject({ code: 'approval_required', proposal });
    expect(await refundWrites()).toBe(0);

    // The live inbox of finance-b shows the proposal without a reload.
    // (It arrived with 0 of 2 and updates to 1 of 2 as the stream sends the change.)
    const live = second.locator(`tr[data-proposal="${proposal}"]`, { hasText: '1 of 2' });
    await live.waitFor({ timeout: 15_000 });
    await live.getByRole('link').first().click();
    await second.waitForURL(/\/proposals\//);
    await second.screenshot({ path: join(ARTIFACTS, 'proposal-phone.png'), fullPage: true });
    // Keyboard only: Tab from the top of the page to the Approve button, then Enter.
    let focused = '';
    for (let presses = 0; presses < 40 && focused !== 'approve'; presses++) {
      await second.keyboard.press('Tab');
      focused = await second.evaluate(() => document.activeElement?.id ?? '');
    }
    expect(focused).toBe('approve');
    await second.keyboard.press('Enter');
    await second.waitForURL(/done=approve/);
    await expect(second.locator('.notice.ok').first().textContent()).resolves.toContain(
      'status authorized',
    );

    // The agent's retry executes the one proposal, once; further retries replay it.
    const executed = structured(await agent.callTool({ name: TOOL, arguments: arguments_ }));
    expect(executed).toMatchObject({ code: 'completed', proposal });
    expect(executed.receipt.id).toMatch(/^re_/);
    expect(await refundWrites()).toBe(1);
    const again = structured(await agent.callTool({ name: TOOL, arguments: arguments_ }));
    expect(again).toMatchObject({ code: 'completed', proposal, duplicate: true });
    expect(await refundWrites()).toBe(1);
    const polled = structured(
      await agent.callTool({ name: 'sideguard_proposal', arguments: { proposal } }),
    );
    // Written, receipted and confirmed by the binding's verify (the refund carries the effect key).
    expect(polled.status).toBe('verified');
    expect(polled).toMatchObject({
      approvals: { approvedBy: ['finance-a', 'finance-b'] },
      receipts: [{ id: executed.receipt.id }],
    });

    await second.getByRole('link', { name: 'Timeline from the ledger' }).click();
    await second.waitForURL(/\/timeline/);
    await expect(second.locator('#chain').textContent()).resolves.toContain('verifies');
    const svg = second.locator('svg.timeline');
    expect(await svg.locator('g[data-type="authority_recorded"]').count()).toBe(2);
    expect(await svg.locator('g[data-type="committed"]').count()).toBe(1);
    await expect(second.locator('#receipts').textContent()).resolves.toContain(executed.receipt.id);
    await second.screenshot({ path: join(ARTIFACTS, 'timeline.png'), fullPage: true });
  }, 60_000);

  it('an operator resolves the outage case in the console: present with the receipt, in the ledger', async () => {
    const store = served.runtime.store;
    // The provider writes, then the connection drops; its refund list is down too (an outage).
    await sandbox.control.setFaults({
      version: 1,
      rules: [
        {
          provider: 'payments',
          operation: 'create_refund',
          requests: [0],
          fault: { kind: 'drop_after_write' },
        },
        {
          provider: 'payments',
          operation: 'list_refunds',
          probability: 1,
          fault: { kind: 'error_before_write', status: 503 },
        },
      ],
    });
    const arguments_ = { charge: 'ch_sg_004', amount: '900' };
    const unknown = structured(await agent.callTool({ name: TOOL, arguments: arguments_ }));
    const proposal = unknown.proposal as string;
    expect((await store.getProposal('acme', proposal))?.status).toBe('verification_unresolved');
    // What the operator sees at the provider's dashboard: the refund with this effect's key.
    const record = await store.getProposal('acme', proposal);
    const found = (await sandbox.control.observations()).receipts.find(
      (receipt) => receipt.effectKey === record?.semanticEffectKey,
    );
    expect(found?.objectId).toMatch(/^re_/);

    const operator = await logIn('ops-oncall');
    await operator.getByRole('link', { name: 'Operator' }).click();
    const row = operator.locator(`tr[data-proposal="${proposal}"]`);
    await expect(row.textContent()).resolves.toContain('verification_unresolved');
    await operator.screenshot({ path: join(ARTIFACTS, 'operator.png'), fullPage: true });
    await row.getByRole('link').first().click();
    await operator.getByLabel(/Present/).check();
    await operator.getByLabel('Receipt id (when present)').fill(found?.objectId ?? '');
    await operator.getByLabel('Provider (when present)').fill('payments');
    await operator
      .getByLabel('What you checked, and where')
      .fill('Payments dashboard during the outage: the refund exists for ch_sg_004');
    await operator.getByRole('button', { name: 'Record the finding' }).click();
    await operator.waitForURL(/done=resolve/);
    await expect(operator.locator('.notice.ok').first().textContent()).resolves.toContain(
      'status verified',
    );

    const [attested] = (await store.readLedger({ tenant: 'acme', proposal })).filter(
      (event) => event.type === 'operator_resolved',
    );
    expect(attested?.data).toMatchObject({
      operator: 'ops-oncall',
      finding: 'present',
      receipt: { id: found?.objectId, provider: 'payments' },
    });
    expect(attested?.data.noteDigest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await sandbox.control.clearFaults();
    // The agent's retry now gets the receipt; nothing was written again.
    const retried = structured(await agent.callTool({ name: TOOL, arguments: arguments_ }));
    expect(retried).toMatchObject({ proposal, receipt: { id: found?.objectId } });
    const receipts = (await sandbox.control.observations()).receipts;
    expect(receipts.filter((r) => r.effectKey === record?.semanticEffectKey)).toHaveLength(1);
  }, 60_000);
});
