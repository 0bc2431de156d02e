// Jest setup provided by Grafana scaffolding
import './.config/jest-setup';

// jsdom has no IntersectionObserver; Grafana's menus (ScrollIndicators) create one when they open.
class IntersectionObserverStub {
  observe() {}
  unobserve() {}
  disconnect() {}
  takeRecords() {
    return [];
  }
}
Object.defineProperty(global, 'IntersectionObserver', { writable: true, value: IntersectionObserverStub });

// The scaffold stubs canvas contexts as undefined; Combobox measures option text with one.
HTMLCanvasElement.prototype.getContext = function getContext() {
  return {
    font: '',
    measureText: (text) => ({ width: String(text).length * 8 }),
  };
};
