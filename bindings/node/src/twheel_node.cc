// SPDX-License-Identifier: MIT
/*
 * The native half of the twheel npm package: one wheel fd per Handle, the
 * ioctls through libtwheel, a libuv poll handle on the fd and the touch
 * table as an external ArrayBuffer. It validates nothing a caller could
 * get wrong on purpose beyond what keeps the process safe (bounds, types,
 * a closed fd): index.js checks arguments and builds the errors; every
 * method here answers with a number, >= 0 or -errno, as libtwheel does.
 *
 * Runs on the JS thread only: no thread, no timer. The poll handle calls
 * back into JS (the handle's "onreadable" property) through MakeCallback,
 * so a throw there is an uncaught exception as in a timer callback.
 *
 * Lifetimes: the uv_poll_t is freed by its close callback, after the
 * Handle may be gone, so it points back only through ->data, cleared at
 * close. While polling, the Handle holds a strong reference to its JS
 * object (an active handle is not collected, as for a socket). The touch
 * table's ArrayBuffer is referenced until close(); close() replaces the
 * wheel's mapping with anonymous memory at the same address, so the wheel
 * is freed with its fd while a BigUint64Array still held by the user stays
 * valid memory; the ArrayBuffer's finalizer unmaps it once collected.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <napi.h>
#include <uv.h>

#include <twheel.h>

namespace {

uint64_t clock_ns(clockid_t clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A BigInt or a Number (index.js checked its range) as a __u64. */
uint64_t to_u64(const Napi::Value &v)
{
	bool lossless;

	if (v.IsBigInt())
		return v.As<Napi::BigInt>().Uint64Value(&lossless);
	return (uint64_t)v.As<Napi::Number>().Int64Value();
}

/* The bytes behind a TypedArray, or nullptr if it has fewer than @need. */
uint8_t *typed_bytes(const Napi::Value &v, size_t need)
{
	if (!v.IsTypedArray())
		return nullptr;
	Napi::TypedArray ta = v.As<Napi::TypedArray>();
	if (ta.ByteLength() < need)
		return nullptr;
	return static_cast<uint8_t *>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
}

class Handle : public Napi::ObjectWrap<Handle> {
public:
	static Napi::Function Init(Napi::Env env)
	{
		return DefineClass(env, "Handle", {
			InstanceMethod<&Handle::Open>("open"),
			InstanceMethod<&Handle::Op>("op"),
			InstanceMethod<&Handle::Batch>("batch"),
			InstanceMethod<&Handle::RefreshIds>("refreshIds"),
			InstanceMethod<&Handle::Read>("read"),
			InstanceMethod<&Handle::Dump>("dump"),
			InstanceMethod<&Handle::MapTouch>("mapTouch"),
			InstanceMethod<&Handle::Touch>("touch"),
			InstanceMethod<&Handle::Now>("now"),
			InstanceMethod<&Handle::Poll>("poll"),
			InstanceMethod<&Handle::SetRef>("ref"),
			InstanceMethod<&Handle::Close>("close"),
			InstanceAccessor<&Handle::Fd>("fd"),
		});
	}

	explicit Handle(const Napi::CallbackInfo &info)
		: Napi::ObjectWrap<Handle>(info),
		  async_(info.Env(), "twheel")
	{
	}

	~Handle() override { Release(false); }

private:
	int fd_ = -1;
	clockid_t clockid_ = CLOCK_MONOTONIC;
	uv_poll_t *poll_ = nullptr;
	bool polling_ = false;
	bool referenced_ = true;
	uint64_t *slots_ = nullptr;
	uint32_t nr_slots_ = 0;
	size_t map_len_ = 0;
	Napi::Reference<Napi::ArrayBuffer> table_;
	Napi::AsyncContext async_;

	static void OnPoll(uv_poll_t *p, int status, int events)
	{
		Handle *h = static_cast<Handle *>(p->data);

		(void)events;
		if (!h)
			return;
		Napi::Env env = h->Env();
		Napi::HandleScope scope(env);
		try {
			Napi::Object self = h->Value();
			Napi::Value cb = self.Get("onreadable");

			if (cb.IsFunction())
				cb.As<Napi::Function>().MakeCallback(
					self, { Napi::Number::New(env, status) }, h->async_);
		} catch (const Napi::Error &e) {
			napi_fatal_exception(env, e.Value());
		}
	}

	/*
	 * Stop polling, free the wheel, close the fd; @from_js: not from the
	 * destructor, where the JS object is being collected and may not be
	 * touched.
	 */
	int Release(bool from_js)
	{
		int ret = 0;

		if (poll_) {
			/* uv_poll_stop() takes the fd out of epoll: only then close it. */
			uv_poll_stop(poll_);
			poll_->data = nullptr;
			uv_close(reinterpret_cast<uv_handle_t *>(poll_),
				 [](uv_handle_t *hd) { delete reinterpret_cast<uv_poll_t *>(hd); });
			poll_ = nullptr;
		}
		if (polling_ && from_js)
			Unref();
		polling_ = false;
		if (slots_) {
			/* Keep the address valid for arrays still held; drop the wheel's pages. */
			mmap(slots_, map_len_, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			slots_ = nullptr;
		}
		if (from_js)
			table_.Reset();
		if (fd_ >= 0) {
			if (close(fd_) < 0)
				ret = -errno;
			fd_ = -1;
		}
		return ret;
	}

	/* open(tickNs, timeoutNs, clockid, cap, touchSlots): undefined or [-errno, syscall]. */
	Napi::Value Open(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		struct twheel_setup_args sa = {};
		uv_loop_t *loop;
		int fd, ret;

		if (fd_ >= 0 || info.Length() < 5)
			throw Napi::TypeError::New(env, "twheel: bad open()");
		sa.tick_ns = to_u64(info[0]);
		sa.default_timeout_ns = to_u64(info[1]);
		sa.clockid = info[2].As<Napi::Number>().Uint32Value();
		sa.max_entries = info[3].As<Napi::Number>().Uint32Value();
		sa.touch_slots = info[4].As<Napi::Number>().Uint32Value();
		if (sa.touch_slots)
			sa.flags = TWHEEL_SETUPF_TOUCH;

		auto fail = [&](int err, const char *syscall) {
			Napi::Array a = Napi::Array::New(env, 2);
			a.Set(0u, Napi::Number::New(env, err));
			a.Set(1u, Napi::String::New(env, syscall));
			return a;
		};
		fd = twheel_open(O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return fail(fd, "open");
		ret = twheel_setup_params(fd, &sa);
		if (ret < 0) {
			close(fd);
			return fail(ret, "ioctl");
		}
		if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
			close(fd);
			return fail(-EINVAL, "uv_poll_init");
		}
		poll_ = new uv_poll_t;
		ret = uv_poll_init(loop, poll_, fd);
		if (ret < 0) {
			delete poll_;
			poll_ = nullptr;
			close(fd);
			return fail(ret, "uv_poll_init");
		}
		poll_->data = this;
		fd_ = fd;
		clockid_ = (clockid_t)sa.clockid;
		return env.Undefined();
	}

	/* op(code, id, timeoutNs, flags, slot, out BigUint64Array[2]): 0 or -errno. */
	Napi::Value Op(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		uint64_t *out = reinterpret_cast<uint64_t *>(typed_bytes(info[5], 16));
		struct twheel_op op = {};
		int ret;

		if (fd_ < 0)
			return Napi::Number::New(env, -EBADF);
		if (!out)
			throw Napi::TypeError::New(env, "twheel: bad op()");
		op.op = info[0].As<Napi::Number>().Uint32Value();
		op.id = to_u64(info[1]);
		op.timeout_ns = to_u64(info[2]);
		op.flags = info[3].As<Napi::Number>().Uint32Value();
		op.slot = info[4].As<Napi::Number>().Uint32Value();
		ret = twheel_submit_op(fd_, &op);
		out[0] = op.deadline_ns;
		out[1] = op.remaining_ns;
		return Napi::Number::New(env, ret);
	}

	/* batch(ops Uint8Array of struct twheel_op, count): applied or -errno. */
	Napi::Value Batch(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		uint32_t count = info[1].As<Napi::Number>().Uint32Value();
		uint8_t *ops = typed_bytes(info[0], (size_t)count * sizeof(struct twheel_op));

		if (fd_ < 0)
			return Napi::Number::New(env, -EBADF);
		if (!ops)
			throw Napi::TypeError::New(env, "twheel: bad batch()");
		return Napi::Number::New(env, twheel_batch(fd_, reinterpret_cast<struct twheel_op *>(ops),
							  count));
	}

	/*
	 * refreshIds(ids BigUint64Array, count, failed BigUint64Array, timeoutNs,
	 * flags, out Uint32Array[1] nr_failed): processed or -errno.
	 */
	Napi::Value RefreshIds(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		uint32_t count = info[1].As<Napi::Number>().Uint32Value();
		size_t bytes = (size_t)count * sizeof(uint64_t);
		uint8_t *ids = typed_bytes(info[0], bytes);
		uint8_t *failed = typed_bytes(info[2], bytes);
		uint8_t *out = typed_bytes(info[5], sizeof(uint32_t));
		unsigned int nr_failed = 0;
		int ret;

		if (fd_ < 0)
			return Napi::Number::New(env, -EBADF);
		if (!ids || !failed || !out)
			throw Napi::TypeError::New(env, "twheel: bad refreshIds()");
		ret = twheel_refresh_ids(fd_, reinterpret_cast<const uint64_t *>(ids), count,
					 to_u64(info[3]), info[4].As<Napi::Number>().Uint32Value(),
					 reinterpret_cast<uint64_t *>(failed), &nr_failed);
		memcpy(out, &nr_failed, sizeof(uint32_t));
		return Napi::Number::New(env, ret);
	}

	/* read(buf Uint8Array): events read, 0 if none waits, or -errno. */
	Napi::Value Read(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		uint8_t *buf = typed_bytes(info[0], sizeof(struct twheel_event));
		size_t max;
		int ret;

		if (fd_ < 0)
			return Napi::Number::New(env, -EBADF);
		if (!buf)
			throw Napi::TypeError::New(env, "twheel: bad read()");
		max = info[0].As<Napi::TypedArray>().ByteLength() / sizeof(struct twheel_event);
		do
			ret = twheel_read_events(fd_, reinterpret_cast<struct twheel_event *>(buf),
						 (unsigned int)max);
		while (ret == -EINTR);
		return Napi::Number::New(env, ret == -EAGAIN ? 0 : ret);
	}

	/* dump(buf Uint8Array, count, cursor BigUint64Array[1]): written or -errno. */
	Napi::Value Dump(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		uint32_t count = info[1].As<Napi::Number>().Uint32Value();
		uint8_t *buf = typed_bytes(info[0], (size_t)count * sizeof(struct twheel_dump_entry));
		uint8_t *cursor = typed_bytes(info[2], sizeof(uint64_t));

		if (fd_ < 0)
			return Napi::Number::New(env, -EBADF);
		if (!buf || !cursor || !count)
			throw Napi::TypeError::New(env, "twheel: bad dump()");
		return Napi::Number::New(env, twheel_dump(fd_,
			reinterpret_cast<struct twheel_dump_entry *>(buf), count,
			reinterpret_cast<uint64_t *>(cursor)));
	}

	/* mapTouch(slots): the table as an ArrayBuffer, or -errno. */
	Napi::Value MapTouch(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		uint32_t n = info[0].As<Napi::Number>().Uint32Value();
		struct twheel_touch t;
		int ret;

		if (fd_ < 0)
			return Napi::Number::New(env, -EBADF);
		if (slots_)
			return table_.Value();
		ret = twheel_touch_map(fd_, n, clockid_, &t);
		if (ret < 0)
			return Napi::Number::New(env, ret);
		slots_ = t.slots;
		nr_slots_ = t.nr_slots;
		map_len_ = t.map_len;
		Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, t.slots, t.map_len,
			[](Napi::Env, void *data, size_t *len) {
				munmap(data, *len);
				delete len;
			}, new size_t(t.map_len));
		table_ = Napi::Persistent(ab);
		return ab;
	}

	/* touch(slot[, ns]): store ns, or the wheel's clock now, into the slot. */
	Napi::Value Touch(const Napi::CallbackInfo &info)
	{
		uint32_t slot = info[0].As<Napi::Number>().Uint32Value();

		if (slots_ && slot < nr_slots_)
			__atomic_store_n(&slots_[slot], info.Length() > 1 ? to_u64(info[1]) :
					 clock_ns(clockid_), __ATOMIC_RELAXED);
		return info.Env().Undefined();
	}

	/* The wheel's clock now, in ns. */
	Napi::Value Now(const Napi::CallbackInfo &info)
	{
		return Napi::BigInt::New(info.Env(), clock_ns(clockid_));
	}

	/* poll(on): start or stop calling onreadable when the fd is readable. */
	Napi::Value Poll(const Napi::CallbackInfo &info)
	{
		Napi::Env env = info.Env();
		bool on = info[0].ToBoolean();
		int ret = 0;

		if (!poll_)
			return Napi::Number::New(env, -EBADF);
		if (on == polling_)
			return Napi::Number::New(env, 0);
		if (on) {
			ret = uv_poll_start(poll_, UV_READABLE, OnPoll);
			if (ret < 0)
				return Napi::Number::New(env, ret);
			Ref();
		} else {
			uv_poll_stop(poll_);
			Unref();
		}
		polling_ = on;
		return Napi::Number::New(env, 0);
	}

	/* ref(on): whether a polling wheel keeps the event loop alive. */
	Napi::Value SetRef(const Napi::CallbackInfo &info)
	{
		referenced_ = info[0].ToBoolean();
		if (poll_) {
			if (referenced_)
				uv_ref(reinterpret_cast<uv_handle_t *>(poll_));
			else
				uv_unref(reinterpret_cast<uv_handle_t *>(poll_));
		}
		return info.Env().Undefined();
	}

	Napi::Value Close(const Napi::CallbackInfo &info)
	{
		return Napi::Number::New(info.Env(), Release(true));
	}

	Napi::Value Fd(const Napi::CallbackInfo &info)
	{
		return Napi::Number::New(info.Env(), fd_);
	}
};

/* errno's name (strerrorname_np) and text, for the errors index.js builds. */
Napi::Value ErrnoInfo(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	int err = info[0].As<Napi::Number>().Int32Value();
	const char *name = strerrorname_np(err);
	Napi::Array a = Napi::Array::New(env, 2);

	a.Set(0u, Napi::String::New(env, name ? name : "EUNKNOWN"));
	a.Set(1u, Napi::String::New(env, strerror(err)));
	return a;
}

/* The uapi's constants and struct layouts, so that no JS file repeats them. */
Napi::Object Constants(Napi::Env env)
{
	Napi::Object c = Napi::Object::New(env);
	auto big = [&](const char *k, uint64_t v) { c.Set(k, Napi::BigInt::New(env, v)); };
	auto num = [&](const char *k, double v) { c.Set(k, Napi::Number::New(env, v)); };

	c.Set("DEVICE", Napi::String::New(env, TWHEEL_DEVICE));
	big("TICK_MIN_NS", TWHEEL_TICK_MIN_NS);
	big("TICK_MAX_NS", TWHEEL_TICK_MAX_NS);
	big("MAX_TIMEOUT_TICKS", TWHEEL_MAX_TIMEOUT_TICKS);
	big("MAX_TIMEOUT_NS", TWHEEL_MAX_TIMEOUT_NS);
	big("DUMP_END", TWHEEL_DUMP_END);
	big("TIMEOUT_DEFAULT", TWHEEL_TIMEOUT_DEFAULT);
	num("TOUCH_MAX_SLOTS", TWHEEL_TOUCH_MAX_SLOTS);
	num("SLOT_NONE", TWHEEL_SLOT_NONE);
	num("OP_ADD", TWHEEL_OP_ADD);
	num("OP_REFRESH", TWHEEL_OP_REFRESH);
	num("OP_CANCEL", TWHEEL_OP_CANCEL);
	num("OP_QUERY", TWHEEL_OP_QUERY);
	num("OPF_TIMEOUT", TWHEEL_OPF_TIMEOUT);
	num("OPF_ADD_IF_ABSENT", TWHEEL_OPF_ADD_IF_ABSENT);
	num("OPF_ABSTIME", TWHEEL_OPF_ABSTIME);
	num("OPF_TOUCH", TWHEEL_OPF_TOUCH);
	num("CLOCK_MONOTONIC", CLOCK_MONOTONIC);
	num("CLOCK_BOOTTIME", CLOCK_BOOTTIME);
	num("OP_SIZE", sizeof(struct twheel_op));
	num("OP_ID", offsetof(struct twheel_op, id));
	num("OP_TIMEOUT_NS", offsetof(struct twheel_op, timeout_ns));
	num("OP_DEADLINE_NS", offsetof(struct twheel_op, deadline_ns));
	num("OP_REMAINING_NS", offsetof(struct twheel_op, remaining_ns));
	num("OP_OP", offsetof(struct twheel_op, op));
	num("OP_FLAGS", offsetof(struct twheel_op, flags));
	num("OP_RESULT", offsetof(struct twheel_op, result));
	num("OP_SLOT", offsetof(struct twheel_op, slot));
	num("EVENT_SIZE", sizeof(struct twheel_event));
	num("EVENT_ID", offsetof(struct twheel_event, id));
	num("EVENT_DEADLINE_NS", offsetof(struct twheel_event, deadline_ns));
	num("EVENT_EXPIRED_NS", offsetof(struct twheel_event, expired_ns));
	num("DUMP_SIZE", sizeof(struct twheel_dump_entry));
	num("DUMP_ID", offsetof(struct twheel_dump_entry, id));
	num("DUMP_DEADLINE_NS", offsetof(struct twheel_dump_entry, deadline_ns));
	num("DUMP_SLOT", offsetof(struct twheel_dump_entry, slot));
	return c;
}

Napi::Object Init(Napi::Env env, Napi::Object exports)
{
	exports.Set("Handle", Handle::Init(env));
	exports.Set("errnoInfo", Napi::Function::New<ErrnoInfo>(env, "errnoInfo"));
	exports.Set("constants", Constants(env));
	return exports;
}

} // namespace

NODE_API_MODULE(twheel, Init)
