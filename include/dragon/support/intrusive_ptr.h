// Reference-counted pointers for immutable IR nodes: the count lives in the object,
// so a raw `const T*` taken from a node can become an owning handle again.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace dragon {

// Base of every reference-counted object. The count is atomic because search
// shares IR between threads.
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) : ref_count_(0) {}
  RefCounted& operator=(const RefCounted&) { return *this; }
  virtual ~RefCounted() = default;

  void retain() const noexcept { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true when the last reference went away.
  bool release() const noexcept { return ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  int32_t use_count() const noexcept { return ref_count_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
};

template <typename T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  IntrusivePtr(std::nullptr_t) {}
  explicit IntrusivePtr(T* ptr) : ptr_(ptr) { if (ptr_) ptr_->retain(); }
  IntrusivePtr(const IntrusivePtr& other) : ptr_(other.ptr_) { if (ptr_) ptr_->retain(); }
  IntrusivePtr(IntrusivePtr&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U>
  IntrusivePtr(const IntrusivePtr<U>& other) : ptr_(other.get()) { if (ptr_) ptr_->retain(); }
  ~IntrusivePtr() { reset(); }

  IntrusivePtr& operator=(const IntrusivePtr& other) {
    IntrusivePtr(other).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& other) noexcept {
    IntrusivePtr(std::move(other)).swap(*this);
    return *this;
  }

  void reset() {
    if (ptr_ && ptr_->release()) delete ptr_;
    ptr_ = nullptr;
  }
  void swap(IntrusivePtr& other) noexcept { std::swap(ptr_, other.ptr_); }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool defined() const { return ptr_ != nullptr; }

  // Identity comparison; structural comparison lives in ir/structural_equal.h.
  bool same_as(const IntrusivePtr& other) const { return ptr_ == other.ptr_; }
  friend bool operator==(const IntrusivePtr& a, std::nullptr_t) { return a.ptr_ == nullptr; }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace dragon
