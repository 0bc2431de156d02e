import React from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { settings } from '../../testing/fixtures';
import { expand, Settings, setup, Stateful } from '../../testing/configEditor';

describe('PrometheusAuth', () => {
  async function openMethods() {
    await userEvent.click(screen.getByLabelText('Authentication method'));
    return within(await screen.findByLabelText('Select options menu'));
  }
  async function chooseAuth(label: string) {
    const menu = await openMethods();
    await userEvent.click(menu.getByText(label));
  }

  it('offers no auth, basic auth and bearer token, each with a description', async () => {
    setup();
    const menu = await openMethods();
    for (const label of ['No Authentication', 'Basic authentication', 'Bearer token']) {
      expect(menu.getByText(label)).toBeInTheDocument();
    }
    expect(menu.getByText('Send a static token in the Authorization header')).toBeInTheDocument();
    expect(menu.queryByText('Forward OAuth Identity')).not.toBeInTheDocument();
  });

  it('basic auth sets basicAuth and the user', async () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings()} spy={spy} />);
    await chooseAuth('Basic authentication');
    fireEvent.change(screen.getByLabelText(/^User \*?$/), { target: { value: 'grafana' } });
    fireEvent.change(screen.getByLabelText(/^Password/), { target: { value: 'pw' } });
    const final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.basicAuth).toBe(true);
    expect(final.basicAuthUser).toBe('grafana');
    expect(final.secureJsonData).toEqual({ basicAuthPassword: 'pw' });
  });

  it('bearer token method stores the token; switching away clears it', async () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings()} spy={spy} />);
    await chooseAuth('Bearer token');
    fireEvent.change(screen.getByLabelText('Bearer token'), { target: { value: 'tok' } });
    let final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.basicAuth).toBe(false);
    expect(final.secureJsonData).toEqual({ bearerToken: 'tok' });
    await chooseAuth('No Authentication');
    final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.secureJsonData).toEqual({ bearerToken: '' });
    expect(final.secureJsonFields.bearerToken).toBe(false);
    expect(screen.queryByLabelText('Bearer token')).not.toBeInTheDocument();
  });

  it('adds a custom header as httpHeaderName1/httpHeaderValue1', async () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings()} spy={spy} />);
    await expand('HTTP headers');
    await userEvent.click(screen.getByText(/add header/i));
    fireEvent.change(screen.getByPlaceholderText('X-Custom-Header'), { target: { value: 'X-Scope-OrgID' } });
    fireEvent.change(screen.getByPlaceholderText('Header value'), { target: { value: 'tenant-a' } });
    // plugin-ui commits headers on blur.
    fireEvent.blur(screen.getByPlaceholderText('Header value'));
    const final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.jsonData).toEqual({ httpHeaderName1: 'X-Scope-OrgID' });
    expect(final.secureJsonData).toEqual({ httpHeaderValue1: 'tenant-a' });
  });

  it('skip TLS verification sets tlsSkipVerify', async () => {
    const { last } = setup();
    await userEvent.click(screen.getByText('Skip TLS certificate validation'));
    expect(last().jsonData).toEqual({ tlsSkipVerify: true });
  });
});
